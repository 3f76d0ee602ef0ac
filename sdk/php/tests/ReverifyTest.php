<?php

declare(strict_types=1);

namespace Gatehouse\Tests;

use Gatehouse\Client;
use Gatehouse\Exception\ConnectionException;
use Gatehouse\Exception\GatehouseException;
use Gatehouse\HttpClient\Response;
use Gatehouse\HttpClient\TransportException;
use Gatehouse\Tests\Support\ScriptedHttpClient;
use PHPUnit\Framework\TestCase;

/** A token validate() cannot check because Gatehouse is out of reach says shouldReverify(). */
final class ReverifyTest extends TestCase
{
    private static function client(\Closure $answer): Client
    {
        return new Client('ak_1', 'sk_1', [
            'base_url' => 'https://g.example',
            'backup_servers' => [],
            'max_retries' => 0,
            'http_client' => new ScriptedHttpClient($answer),
        ]);
    }

    private static function thrown(Client $client): GatehouseException
    {
        try {
            $client->validate('pt_x');
        } catch (GatehouseException $e) {
            return $e;
        }
        self::fail('validate returned a verdict');
    }

    public function testNoAnswerSaysReverify(): void
    {
        $e = self::thrown(self::client(fn (): Response => throw new TransportException('refused')));
        self::assertInstanceOf(ConnectionException::class, $e);
        self::assertTrue($e->shouldReverify());
    }

    public function testGatewayStatusesSayReverifyOthersDoNot(): void
    {
        foreach ([[502, 'service_unavailable', true], [503, 'service_unavailable', true], [504, 'service_unavailable', true], [503, 'service_online', false], [500, 'internal_error', false], [401, 'invalid_app_secret', false]] as [$status, $code, $want]) {
            $e = self::thrown(self::client(fn (): Response => ScriptedHttpClient::json($status, ['code' => -1, 'error' => $code, 'message' => $code])));
            self::assertSame($want, $e->shouldReverify(), "$status $code");
        }
    }
}
