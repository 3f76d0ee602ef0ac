<?php

declare(strict_types=1);

namespace Gatehouse\Tests;

use Gatehouse\Client;
use Gatehouse\Exception\AuthenticationException;
use Gatehouse\Exception\InvalidRequestException;
use Gatehouse\Tests\Support\FakeHosts;
use PHPUnit\Framework\TestCase;

/**
 * Against a real main API, started by sdk/run-sdk-tests.sh, which exports GATEHOUSE_TEST_URL,
 * GATEHOUSE_TEST_APP_KEY, GATEHOUSE_TEST_APP_SECRET (a test-mode app), GATEHOUSE_TEST_SOLVER (prints a fresh
 * pass token: solver ACTION [SERVER_TOKEN]) and GATEHOUSE_TEST_FALLBACK_PORT (the fallback host the API
 * publishes at GET /v1/standby).
 */
final class IntegrationTest extends TestCase
{
    private static bool $warned = false;
    private ?FakeHosts $fallback = null;

    protected function tearDown(): void
    {
        $this->fallback?->stop();
        $this->fallback = null;
    }

    /** @return array{url: string, key: string, secret: string, solver: string} */
    public static function api(): array
    {
        $api = [
            'url' => (string) getenv('GATEHOUSE_TEST_URL'),
            'key' => (string) getenv('GATEHOUSE_TEST_APP_KEY'),
            'secret' => (string) getenv('GATEHOUSE_TEST_APP_SECRET'),
            'solver' => (string) getenv('GATEHOUSE_TEST_SOLVER'),
        ];
        if (in_array('', $api, true)) {
            $message = 'no real API: run bash sdk/run-sdk-tests.sh (it starts one and sets GATEHOUSE_TEST_*)';
            if (getenv('CI') === 'true') {
                self::fail("$message; CI=true: nothing may be skipped");
            }
            if (!self::$warned) {
                fwrite(STDERR, "\n!! SKIPPING the integration tests and docs examples: $message\n");
                self::$warned = true;
            }
            self::markTestSkipped($message);
        }
        return $api;
    }

    /** A real pass token, minted through the challenge protocol by the headless solver. */
    public static function solve(string $action, ?string $serverToken = null): string
    {
        $command = escapeshellarg(self::api()['solver']) . ' ' . escapeshellarg($action);
        if ($serverToken !== null) {
            $command .= ' ' . escapeshellarg($serverToken);
        }
        $token = trim((string) shell_exec($command));
        self::assertStringStartsWith('pt_', $token, 'the solver did not print a pass token');
        return $token;
    }

    private static function client(array $options = []): Client
    {
        $api = self::api();
        return new Client(['app_key' => $api['key'], 'app_secret' => $api['secret'], 'base_url' => $api['url'], 'standby_cache' => false] + $options);
    }

    public function testValidatesOnceThenTokenAlreadyUsed(): void
    {
        $client = self::client();
        $token = self::solve('login');
        $first = $client->validate($token, ['expected_action' => 'login', 'client_ip' => '127.0.0.1']);
        self::assertTrue($first->valid);
        self::assertTrue($first->accepted);
        self::assertSame('login', $first->action);
        self::assertStringStartsWith('ch_', (string) $first->challengeId);
        self::assertSame('web', $first->captchaArgs?->platform);
        self::assertSame('match', $first->clientIpCheck);
        self::assertNotNull($first->requestId);

        $replay = $client->validate($token, ['expected_action' => 'login']);
        self::assertFalse($replay->valid);
        self::assertFalse($replay->accepted);
        self::assertSame('token_already_used', $replay->errorCode);
    }

    public function testWrongActionIsNotAccepted(): void
    {
        $verdict = self::client()->validate(self::solve('register'), ['expected_action' => 'login']);
        // The API checks the expected action: the token_action_mismatch verdict, naming the token's action.
        self::assertFalse($verdict->valid);
        self::assertFalse($verdict->accepted);
        self::assertSame('register', $verdict->action);
        self::assertSame('token_action_mismatch', $verdict->errorCode);
    }

    public function testForgedAndClientOnlyTokens(): void
    {
        $client = self::client();
        self::assertSame('token_not_found', $client->validate('pt_forged')->errorCode);
        self::assertSame('token_not_found', $client->validate('dg_forged')->errorCode);
        $co = $client->validate('co_0123456789abcdef');
        self::assertTrue($co->clientOnly);
        self::assertFalse($co->valid);
    }

    public function testIssuesServerTokensThatBindAUid(): void
    {
        $client = self::client();
        $issued = $client->issueServerToken(['action' => 'login', 'ttl' => 120, 'max_uses' => 1, 'bind_uid' => 'user-42']);
        self::assertStringStartsWith('sct_', $issued->serverToken);
        self::assertSame(120, $issued->expiresIn);
        self::assertEqualsWithDelta(time(), $issued->issuedAt, 60);
        $verdict = $client->validate(self::solve('login', $issued->serverToken), ['expected_action' => 'login']);
        self::assertTrue($verdict->accepted);
        self::assertSame('user-42', $verdict->uid);

        // A ttl above 900 is granted as 900, and expires_in says so; 0 is refused.
        self::assertSame(900, $client->issueServerToken(['action' => 'login', 'ttl' => 901])->expiresIn);
        try {
            $client->issueServerToken(['action' => 'login', 'ttl' => 0]);
            self::fail('ttl 0 was accepted');
        } catch (InvalidRequestException $e) {
            self::assertSame(['invalid_request', 400], [$e->getErrorCode(), $e->getStatus()]);
        }
    }

    public function testWrongCredentialsAreExceptions(): void
    {
        $api = self::api();
        foreach ([[$api['key'], 'sk_not-the-secret', 'invalid_app_secret'], ['ak_unknown', $api['secret'], 'invalid_app_key']] as [$key, $secret, $code]) {
            $client = new Client($key, $secret, ['base_url' => $api['url'], 'standby_cache' => false]);
            try {
                $client->validate('pt_anything');
                self::fail("no $code");
            } catch (AuthenticationException $e) {
                self::assertSame([$code, 401], [$e->getErrorCode(), $e->getStatus()]);
                self::assertNotNull($e->getRequestId());
            }
        }
    }

    public function testDiscoveryRoutesOfflineTokensToThePublishedFallbackHost(): void
    {
        $this->startFallback([[
            'status' => 200,
            'body' => ['code' => 0, 'data' => ['valid' => true, 'challenge_id' => 'ch_off', 'action' => 'login', 'uid' => null, 'offline' => true,
                'captcha_args' => ['platform' => 'web', 'user_ip' => '127.0.0.1', 'referer' => null, 'pkg' => null, 'solved_at' => 1, 'risk_score' => 40]]],
        ]]);
        $verdict = self::client()->validate('offline_from.the.standby', ['expected_action' => 'login']);
        self::assertTrue($verdict->accepted);
        self::assertTrue($verdict->offline);
        $requests = $this->fallback->records();
        self::assertCount(1, $requests);
        self::assertSame(['fallback1', 'POST', '/api/validate'], [$requests[0]['host'], $requests[0]['method'], $requests[0]['path']]);
    }

    public function testServiceOnlineFromTheFallbackHostSendsTheCallToMain(): void
    {
        $this->startFallback([[
            'status' => 503,
            'body' => ['code' => -1, 'error' => 'service_online', 'message' => 'The main API is online. Call the base URL instead of the standby service.'],
        ]]);
        $verdict = self::client()->validate('offline_forged.token');
        // The real main API accepts offline_ tokens too; a forged one is token_not_found there.
        self::assertFalse($verdict->valid);
        self::assertTrue($verdict->offline);
        self::assertSame('token_not_found', $verdict->errorCode);
        self::assertNotNull($verdict->requestId);
        self::assertCount(1, $this->fallback->records());
    }

    /**
     * Real offline_ tokens, minted on the standby's bypass host, validated through the real fallback host
     * (discovered, after a published host that is down), then through the main API once the standby says
     * service_online.
     */
    public function testRealStandby(): void
    {
        $api = self::api();
        if (getenv('GATEHOUSE_TEST_STANDBY_URL') === false) {
            if (getenv('CI') === 'true') {
                self::fail('no real standby (GATEHOUSE_TEST_STANDBY_URL is unset); CI=true: nothing may be skipped');
            }
            self::markTestSkipped('no real standby: run bash sdk/run-sdk-tests.sh');
        }
        $solveOffline = static function () use ($api): string {
            $token = trim((string) shell_exec(escapeshellarg($api['solver']) . ' --offline login'));
            self::assertStringStartsWith('offline_', $token, 'the offline solver did not print an offline_ token');
            return $token;
        };
        self::standbyMode('serve'); // as during an outage of the main API
        try {
            $client = self::client(); // the backup hosts come from GET /v1/standby
            $token = $solveOffline();
            $verdict = $client->validate($token, ['expected_action' => 'login', 'client_ip' => '127.0.0.1']);
            self::assertTrue($verdict->accepted);
            self::assertTrue($verdict->offline);
            self::assertSame('match', $verdict->clientIpCheck);
            $replay = $client->validate($token);
            self::assertSame('token_already_used', $replay->errorCode);
            self::assertTrue($replay->offline);

            // The main API is back: the standby answers service_online, the SDK goes to the main API.
            $second = $solveOffline();
            self::standbyMode('online');
            self::assertTrue($client->validate($second, ['expected_action' => 'login'])->accepted);
            self::assertSame('token_already_used', $client->validate($second)->errorCode);
            if (getenv('GATEHOUSE_TEST_SHARED_STORE') === '1') {
                // Consumed on the standby before the recovery: the main API honours it.
                self::assertSame('token_already_used', $client->validate($token)->errorCode);
            }
        } finally {
            self::standbyMode('auto');
        }
    }

    /** Sets the real standby's mode (auto, serve, online) as the operator would. */
    private static function standbyMode(string $mode): void
    {
        $token = trim((string) file_get_contents((string) getenv('GATEHOUSE_TEST_STANDBY_TOKEN_FILE')));
        $context = stream_context_create(['http' => [
            'method' => 'POST',
            'header' => "Authorization: Bearer $token\r\nContent-Type: application/json",
            'content' => json_encode(['mode' => $mode]),
            'ignore_errors' => true,
        ]]);
        $body = file_get_contents(getenv('GATEHOUSE_TEST_STANDBY_URL') . '/internal/v1/mode', false, $context);
        self::assertStringContainsString('"code":0', (string) $body, "standby mode $mode");
    }

    private function startFallback(array $answers): void
    {
        self::api();
        $port = (int) getenv('GATEHOUSE_TEST_FALLBACK_PORT');
        if ($port === 0) {
            if (getenv('CI') === 'true') {
                self::fail('GATEHOUSE_TEST_FALLBACK_PORT is unset; CI=true: nothing may be skipped');
            }
            self::markTestSkipped('GATEHOUSE_TEST_FALLBACK_PORT is unset');
        }
        $this->fallback = new FakeHosts(['fallback1' => $answers], ['fallback1' => $port]);
    }
}
