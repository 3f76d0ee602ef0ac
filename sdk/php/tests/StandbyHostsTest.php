<?php

declare(strict_types=1);

namespace Gatehouse\Tests;

use Gatehouse\HttpClient\Response;
use Gatehouse\HttpClient\TransportException;
use Gatehouse\Internal\Config;
use Gatehouse\Internal\StandbyHosts;
use Gatehouse\Internal\Transport;
use Gatehouse\Tests\Support\ScriptedHttpClient;
use PHPUnit\Framework\TestCase;

final class StandbyHostsTest extends TestCase
{
    private string $cache;
    private int $now = 1_800_000_000;
    /** @var int|string status, or 'down' for no answer */
    private int|string $answer = 200;
    private string $fallback = '["https://fallbackapiv1-a.example", "https://fallbackapiv1-b.example/"]';
    private ScriptedHttpClient $http;

    protected function setUp(): void
    {
        $this->cache = sys_get_temp_dir() . '/gatehouse-standby-test-' . bin2hex(random_bytes(6)) . '.json';
        $this->http = new ScriptedHttpClient(function (string $method, string $url): Response {
            self::assertSame(['GET', 'https://g.example/v1/standby'], [$method, $url]);
            if ($this->answer === 'down') {
                throw new TransportException('connection refused');
            }
            return new Response((int) $this->answer, [], '{"code":0,"data":{"bypass":[],"fallback":' . $this->fallback . '}}');
        });
    }

    protected function tearDown(): void
    {
        @unlink($this->cache);
    }

    private function hosts(string|false|null $cache = null): StandbyHosts
    {
        $config = Config::fromArray([
            'app_key' => 'ak_1', 'app_secret' => 'sk_1', 'base_url' => 'https://g.example',
            'http_client' => $this->http, 'standby_cache' => $cache ?? $this->cache,
        ]);
        return new StandbyHosts($config, new Transport($config), fn () => $this->now);
    }

    public function testDiscoveredOnceThenCachedAcrossProcesses(): void
    {
        $want = ['https://fallbackapiv1-a.example', 'https://fallbackapiv1-b.example'];
        self::assertSame($want, $this->hosts()->get(false));
        // A new client (as in the next PHP request) reads the file instead of asking again.
        self::assertSame($want, $this->hosts()->get(false));
        self::assertSame($want, $this->hosts()->get(true));
        self::assertCount(1, $this->http->requests);
    }

    public function testRefreshAfterTtlButNotForOfflineTokens(): void
    {
        $this->hosts()->get(false);
        $this->now += StandbyHosts::TTL;
        $this->hosts()->get(true);
        self::assertCount(1, $this->http->requests, 'an offline_ call waited for a refresh');
        $this->fallback = '["https://fallbackapiv1-c.example", "not a url", 42]';
        self::assertSame(['https://fallbackapiv1-c.example'], $this->hosts()->get(false));
        self::assertCount(2, $this->http->requests);
    }

    public function testFailedRefreshKeepsTheHostsAndWaitsBeforeTryingAgain(): void
    {
        $hosts = $this->hosts();
        $hosts->get(false);
        $this->now += StandbyHosts::TTL;
        $this->answer = 'down';
        self::assertCount(2, $hosts->get(false));
        self::assertCount(2, $this->hosts()->get(false), 'another process forgot the hosts or retried at once');
        self::assertCount(2, $this->http->requests);
        $this->now += StandbyHosts::RETRY;
        $this->answer = 500;
        self::assertCount(2, $hosts->get(false));
        self::assertCount(3, $this->http->requests);
    }

    public function testDiscoveryIsPublicDeduplicatedAndBounded(): void
    {
        $this->fallback = json_encode(array_map(fn (int $i) => 'https://fallbackapiv1-' . ($i % 10) . '.example', range(0, 11)));
        $hosts = $this->hosts(false)->get(false);
        self::assertCount(StandbyHosts::MAX_HOSTS, $hosts);
        self::assertSame('https://fallbackapiv1-0.example', $hosts[0]);
        self::assertArrayNotHasKey('X-App-Secret', $this->http->requests[0]['headers']);
        self::assertArrayNotHasKey('X-App-Key', $this->http->requests[0]['headers']);
    }

    public function testA404MeansNoStandbyHosts(): void
    {
        $this->answer = 404;
        self::assertSame([], $this->hosts(false)->get(true));
    }

    public function testBackupServersOptionSkipsDiscovery(): void
    {
        $config = Config::fromArray(['app_key' => 'ak_1', 'app_secret' => 'sk_1', 'base_url' => 'https://g.example', 'http_client' => $this->http, 'backup_servers' => ['https://f.example/']]);
        self::assertSame(['https://f.example'], (new StandbyHosts($config, new Transport($config)))->get(true));
        self::assertSame([], $this->http->requests);
    }

    public function testAnUnwritableCacheIsNotAnError(): void
    {
        self::assertCount(2, $this->hosts('/nonexistent-dir/gatehouse.json')->get(false));
    }
}
