<?php

declare(strict_types=1);

namespace Gatehouse\Tests;

use Gatehouse\Client;
use Gatehouse\Exception\ConfigException;
use Gatehouse\Exception\GatehouseException;
use Gatehouse\Tests\Support\ScriptedHttpClient;
use PHPUnit\Framework\TestCase;

final class ConfigTest extends TestCase
{
    /** @return iterable<string, array{array<mixed>, string}> */
    public static function mistakes(): iterable
    {
        $ok = ['app_key' => 'ak_1', 'app_secret' => 'sk_1'];
        yield 'missing key' => [['app_secret' => 'sk_1'], "app_key is required (the app's public key, ak_...)."];
        yield 'missing secret' => [['app_key' => 'ak_1'], "app_secret is required (the app's secret, sk_...)."];
        yield 'key not a string' => [['app_key' => 42, 'app_secret' => 'sk_1'], "app_key must be a string (the app's public key, ak_...); got int."];
        yield 'swapped' => [['app_key' => 'sk_1', 'app_secret' => 'ak_1'], 'app_key and app_secret are swapped: app_key is the public ak_... value, app_secret the sk_... one.'];
        yield 'secret as key' => [['app_key' => 'sk_1', 'app_secret' => 'sk_2'], 'app_key starts with sk_: that is a secret; app_key is the public ak_... key.'];
        yield 'newline' => [['app_key' => 'ak_1', 'app_secret' => "sk_1\n"], 'app_secret contains whitespace: a trailing newline from a file or an environment variable?'];
        yield 'unknown option' => [$ok + ['apiKey' => 'x'], 'unknown option apiKey; the options are app_key, app_secret, base_url, backup_servers, timeout, max_retries, http_client, standby_cache.'];
        yield 'base_url scheme' => [$ok + ['base_url' => 'gatehouse.example.com'], "base_url must be an http:// or https:// URL such as https://gatehouse.example.com; got 'gatehouse.example.com'."];
        yield 'base_url query' => [$ok + ['base_url' => 'https://g.example/?a=1'], "base_url must not carry a query string or a fragment; got 'https://g.example/?a=1'."];
        yield 'base_url credentials' => [$ok + ['base_url' => 'https://u:p@g.example'], 'base_url must not carry credentials: use app_key and app_secret.'];
        yield 'standby as base_url' => [$ok + ['base_url' => 'https://bypass.g.example'], "base_url points at a standby host (bypass.g.example); set it to the main API's base URL. Standby hosts are not an alternative API: they answer service_online while the main API is up."];
        yield 'backup_servers not a list' => [$ok + ['backup_servers' => 'https://f.example'], 'backup_servers must be a list of http:// or https:// URLs (or [] for none); got string.'];
        yield 'backup_servers entry' => [$ok + ['backup_servers' => ['ftp://f.example']], "backup_servers must be an http:// or https:// URL such as https://gatehouse.example.com; got 'ftp://f.example'."];
        yield 'backup is base' => [$ok + ['base_url' => 'https://g.example', 'backup_servers' => ['https://g.example/']], "backup_servers lists the base URL https://g.example: backup servers are the standby's fallbackapiv1. hosts."];
        yield 'timeout' => [$ok + ['timeout' => '5'], "timeout must be a number of seconds above 0 and at most 600; got '5'."];
        yield 'timeout zero' => [$ok + ['timeout' => 0], 'timeout must be a number of seconds above 0 and at most 600; got 0.'];
        yield 'max_retries' => [$ok + ['max_retries' => 11], 'max_retries must be a whole number from 0 to 10; got 11.'];
        yield 'http_client' => [$ok + ['http_client' => new \stdClass()], 'http_client must implement Gatehouse\HttpClient\HttpClientInterface; got stdClass.'];
        yield 'standby_cache' => [$ok + ['standby_cache' => true], 'standby_cache must be a file path or false (no file cache); got true.'];
    }

    /** @dataProvider mistakes */
    public function testMisconfigurationThrowsOnePreciseSentence(array $options, string $sentence): void
    {
        try {
            new Client($options);
            self::fail('no exception');
        } catch (ConfigException $e) {
            self::assertSame('Gatehouse: ' . $sentence, $e->getMessage());
            self::assertSame('invalid_config', $e->getErrorCode());
            self::assertNull($e->getStatus());
            self::assertInstanceOf(GatehouseException::class, $e);
        }
    }

    public function testStringCredentialsWithOptions(): void
    {
        $client = new Client('ak_1', 'sk_1', ['base_url' => 'https://g.example/']);
        self::assertSame('https://g.example', $client->getBaseUrl());
        self::assertSame('http://127.0.0.1:8080', (new Client(['app_key' => 'ak_1', 'app_secret' => 'sk_1']))->getBaseUrl());
    }

    public function testCredentialsTwiceAreRefused(): void
    {
        $this->expectExceptionMessage('Gatehouse: give the app key and secret either as arguments or as options, not both.');
        new Client('ak_1', 'sk_1', ['app_secret' => 'sk_2']);
    }

    public function testArrayWithExtraArgumentsIsRefused(): void
    {
        $this->expectExceptionMessage("Gatehouse: with an array of options, pass nothing else: new Client(['app_key' => ..., 'app_secret' => ...]).");
        new Client(['app_key' => 'ak_1', 'app_secret' => 'sk_1'], 'sk_2');
    }

    /** @return iterable<string, array{callable(Client): mixed, string}> */
    public static function callMistakes(): iterable
    {
        yield 'unknown validate option' => [fn (Client $c) => $c->validate('pt_x', ['expectedAction' => 'login']), 'unknown validate option expectedAction; the options are client_ip, expected_action, idempotency_key.'];
        yield 'non-string option' => [fn (Client $c) => $c->validate('pt_x', ['client_ip' => 7]), "validate's client_ip must be a non-empty string; got int."];
        yield 'bad idempotency key' => [fn (Client $c) => $c->validate('pt_x', ['idempotency_key' => 'a b']), 'idempotency_key must be 1 to 128 characters of letters, digits, _ . : or -.'];
        yield 'issue without action' => [fn (Client $c) => $c->issueServerToken(['ttl' => 60]), "issueServerToken needs ['action' => ...], the scene such as login."];
        yield 'issue ttl as string' => [fn (Client $c) => $c->issueServerToken(['action' => 'login', 'ttl' => '60']), "issueServerToken's ttl must be a whole number; got string."];
        yield 'issue unknown field' => [fn (Client $c) => $c->issueServerToken(['action' => 'login', 'bindIp' => '1.2.3.4']), 'unknown issueServerToken option bindIp; the options are action, ttl, max_uses, bind_ip, bind_device_id, bind_fingerprint, bind_uid.'];
    }

    /** @dataProvider callMistakes */
    public function testCallMistakesSendNothing(callable $call, string $sentence): void
    {
        $http = new ScriptedHttpClient(fn () => self::fail('a request was sent'));
        $client = new Client(['app_key' => 'ak_1', 'app_secret' => 'sk_1', 'http_client' => $http, 'backup_servers' => []]);
        try {
            $call($client);
            self::fail('no exception');
        } catch (ConfigException $e) {
            self::assertSame('Gatehouse: ' . $sentence, $e->getMessage());
        }
        self::assertSame([], $http->requests);
    }

    public function testVerdictIsReadonly(): void
    {
        $client = new Client(['app_key' => 'ak_1', 'app_secret' => 'sk_1', 'backup_servers' => []]);
        $verdict = $client->validate('co_abc');
        self::assertTrue($verdict->clientOnly);
        self::assertFalse($verdict->accepts('login'));
        $this->expectException(\Error::class);
        $verdict->valid = true; // @phpstan-ignore-line
    }

    public function testUntrustedTokenShapesAreVerdicts(): void
    {
        $client = new Client(['app_key' => 'ak_1', 'app_secret' => 'sk_1', 'backup_servers' => [], 'http_client' => new ScriptedHttpClient(fn () => self::fail('request'))]);
        foreach ([null, '', ['pt_x'], str_repeat('a', 1025)] as $token) {
            self::assertSame('token_not_found', $client->validate($token)->errorCode);
        }
    }
}
