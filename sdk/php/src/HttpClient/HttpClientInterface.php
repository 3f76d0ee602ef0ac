<?php

declare(strict_types=1);

namespace Gatehouse\HttpClient;

/**
 * One HTTP exchange, nothing more: no retries, no redirects. The client's `http_client` option takes any
 * implementation (a proxy, instrumentation, tests); the default is StreamClient (PHP streams, no extension).
 */
interface HttpClientInterface
{
    /**
     * @param array<string, string> $headers
     * @param float $timeout seconds allowed for connecting and for each read
     * @throws TransportException when there is no HTTP answer (refused, reset, DNS, timeout)
     */
    public function request(string $method, string $url, array $headers, ?string $body, float $timeout): Response;
}
