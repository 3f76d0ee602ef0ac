<?php

declare(strict_types=1);

namespace Gatehouse\Tests\Support;

use Gatehouse\HttpClient\HttpClientInterface;
use Gatehouse\HttpClient\Response;

/** An in-process HTTP client: answers with a callable and records the requests. */
final class ScriptedHttpClient implements HttpClientInterface
{
    /** @var list<array{method: string, url: string, headers: array<string, string>, body: ?string}> */
    public array $requests = [];

    /** @param \Closure(string, string, ?string): Response $answer method, URL, body */
    public function __construct(private \Closure $answer)
    {
    }

    public function request(string $method, string $url, array $headers, ?string $body, float $timeout): Response
    {
        $this->requests[] = ['method' => $method, 'url' => $url, 'headers' => $headers, 'body' => $body];
        return ($this->answer)($method, $url, $body);
    }

    public static function json(int $status, array $body): Response
    {
        return new Response($status, ['content-type' => 'application/json'], json_encode($body));
    }
}
