<?php

declare(strict_types=1);

namespace Gatehouse\Tests;

use Gatehouse\Client;
use Gatehouse\Exception\GatehouseException;
use Gatehouse\Exception\RateLimitException;
use Gatehouse\Tests\Support\FakeHosts;
use PHPUnit\Framework\TestCase;

/** The shared vectors (sdk/test-vectors), run against fake hosts exactly as README.md there says. */
final class VectorsTest extends TestCase
{
    private const DIR = __DIR__ . '/../../test-vectors/';

    private ?FakeHosts $hosts = null;

    protected function tearDown(): void
    {
        $this->hosts?->stop();
        $this->hosts = null;
    }

    /** @return iterable<string, array{array<string, mixed>, array<string, mixed>}> */
    public static function validateCases(): iterable
    {
        return self::cases('validate.json');
    }

    /** @return iterable<string, array{array<string, mixed>, array<string, mixed>}> */
    public static function issueCases(): iterable
    {
        return self::cases('issue.json');
    }

    private static function cases(string $file): iterable
    {
        $doc = json_decode((string) file_get_contents(self::DIR . $file), true, 512, JSON_THROW_ON_ERROR);
        foreach ($doc['cases'] as $case) {
            yield $case['name'] => [$doc['client'], $case];
        }
    }

    /** @dataProvider validateCases */
    public function testValidate(array $defaults, array $case): void
    {
        $client = $this->client($defaults, $case);
        $result = null;
        $error = null;
        try {
            $result = $client->validate($case['token'], $case['options']);
        } catch (GatehouseException $e) {
            $error = $e;
        }
        $this->checkRequests($defaults, $case['requests'], 'application/json');
        if (isset($case['error'])) {
            $this->checkError($case['error'], $error, $result?->toArray());
            return;
        }
        self::assertNull($error, 'unexpected ' . ($error ? get_class($error) . ': ' . $error->getMessage() : ''));
        self::assertSame(self::normalize($case['verdict']), self::normalize($result->toArray()));
    }

    /** @dataProvider issueCases */
    public function testIssueServerToken(array $defaults, array $case): void
    {
        $client = $this->client($defaults, $case);
        $result = null;
        $error = null;
        try {
            $result = $client->issueServerToken($case['params']);
        } catch (GatehouseException $e) {
            $error = $e;
        }
        $this->checkRequests($defaults, $case['requests'], 'application/x-www-form-urlencoded');
        if (isset($case['error'])) {
            $this->checkError($case['error'], $error, $result);
            if (array_key_exists('retry_after_seconds', $case['error'])) {
                self::assertInstanceOf(RateLimitException::class, $error);
                self::assertSame($case['error']['retry_after_seconds'], $error->getRetryAfter());
            }
            return;
        }
        self::assertNull($error, 'unexpected ' . ($error ? $error->getMessage() : ''));
        self::assertSame($case['result'], [
            'server_token' => $result->serverToken,
            'expires_in' => $result->expiresIn,
            'issued_at' => $result->issuedAt,
        ]);
    }

    private function client(array $defaults, array $case): Client
    {
        $this->hosts = new FakeHosts($case['answers']);
        $settings = ($case['client'] ?? []) + $defaults;
        $options = [
            'app_key' => $settings['app_key'],
            'app_secret' => $settings['app_secret'],
            'base_url' => $this->hosts->url('main'),
            'timeout' => $settings['timeout_ms'] / 1000,
            'max_retries' => $settings['max_retries'],
            'standby_cache' => false,
        ];
        if ($settings['backup_servers'] !== 'discover') {
            $options['backup_servers'] = array_map(fn (string $name) => $this->hosts->url($name), $settings['backup_servers']);
        }
        return new Client($options);
    }

    private function checkError(array $want, ?GatehouseException $error, mixed $result): void
    {
        self::assertNotNull($error, 'expected the error ' . $want['code'] . ', got ' . json_encode($result));
        self::assertSame(
            [$want['code'], $want['status'], $want['request_id']],
            [$error->getErrorCode(), $error->getStatus(), $error->getRequestId()],
            $error->getMessage(),
        );
    }

    private function checkRequests(array $defaults, array $want, string $contentType): void
    {
        $got = $this->hosts->records();
        $complaints = $this->hosts->complaints();
        self::assertSame('', $complaints, 'the fake hosts got unexpected requests');
        self::assertSame(
            array_column($want, 'host'),
            array_column($got, 'host'),
            'hosts of the requests, in order',
        );
        $key = null;
        foreach ($want as $i => $w) {
            $g = $got[$i];
            $n = $i + 1;
            if (isset($w['min_delay_ms']) && $i > 0) {
                self::assertGreaterThanOrEqual($w['min_delay_ms'] / 1000, $g['at'] - $got[$i - 1]['at'], "request $n came too early");
            }
            if (!$g['observed']) {
                continue;
            }
            self::assertSame([$w['method'], $w['path']], [$g['method'], $g['path']], "request $n");
            if ($g['method'] !== 'POST') {
                self::assertArrayNotHasKey('x-app-secret', $g['headers'], "request $n: the app secret was sent to {$g['path']}");
                continue;
            }
            self::assertSame($defaults['app_key'], $g['headers']['x-app-key'] ?? null, "request $n: X-App-Key");
            self::assertSame($defaults['app_secret'], $g['headers']['x-app-secret'] ?? null, "request $n: X-App-Secret");
            self::assertSame($contentType, $g['headers']['content-type'] ?? null, "request $n: Content-Type");
            if (isset($w['form'])) {
                parse_str($g['body'], $form);
                ksort($form);
                $expected = $w['form'];
                ksort($expected);
                self::assertSame($expected, $form, "request $n: form");
                continue;
            }
            $body = json_decode($g['body'], true, 512, JSON_THROW_ON_ERROR);
            $gotKey = $body['idempotency_key'] ?? null;
            unset($body['idempotency_key']);
            if (isset($w['body'])) {
                self::assertEquals($w['body'], $body, "request $n: body");
            }
            if (is_bool($w['idempotency_key'])) {
                self::assertSame($w['idempotency_key'], $gotKey !== null, "request $n: idempotency_key present");
            } else {
                self::assertSame($w['idempotency_key'], $gotKey, "request $n: idempotency_key");
            }
            if ($gotKey !== null) {
                self::assertTrue($key === null || $key === $gotKey, "request $n: the idempotency key changed within one call");
                $key = $gotKey;
            }
        }
    }

    /** Sorts keys recursively so the comparison ignores order. */
    private static function normalize(?array $value): ?array
    {
        if ($value === null) {
            return null;
        }
        ksort($value);
        foreach ($value as $k => $v) {
            if (is_array($v)) {
                $value[$k] = self::normalize($v);
            }
        }
        return $value;
    }
}
