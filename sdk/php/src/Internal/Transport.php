<?php

declare(strict_types=1);

namespace Gatehouse\Internal;

use Gatehouse\Exception\ConnectionException;
use Gatehouse\HttpClient\TransportException;

/**
 * How the SDK reaches Gatehouse: one logical call over a route of hosts, with a timeout per attempt and
 * the retry policy.
 *
 * @internal
 */
final class Transport
{
    public const VERSION = '0.1.0';

    /** @var \Closure(float): void */
    private \Closure $sleep;
    /** @var \Closure(): float */
    private \Closure $random;

    public function __construct(private readonly Config $config, ?\Closure $sleep = null, ?\Closure $random = null)
    {
        $this->sleep = $sleep ?? static function (float $seconds): void {
            usleep((int) round($seconds * 1e6));
        };
        $this->random = $random ?? static fn (): float => mt_rand() / (mt_getrandmax() + 1);
    }

    /**
     * Sends one call over a route: each host once, in order, moving on when it gives no answer or a 5xx;
     * `service_online` from a host that is not the last jumps straight to the last (the main API, which
     * that answer says is up). Only the last host is retried, with backoff. Returns the final answer,
     * success or not; throws ConnectionException when the last host gave no answer.
     *
     * @param list<array{string, string}> $route [base URL, path] pairs; the last is the main API
     */
    public function send(array $route, string $method, ?string $body, ?string $contentType, bool $retryRateLimited = false): Answer
    {
        $failed = [];
        $count = count($route);
        for ($i = 0; $i < $count; $i++) {
            [$base, $path] = $route[$i];
            $url = $base . $path;
            $last = $i === $count - 1;
            for ($retry = 0; ; $retry++) {
                $failure = null;
                try {
                    $answer = $this->attempt($url, $method, $body, $contentType);
                } catch (TransportException $e) {
                    $answer = null;
                    $failure = $e;
                }
                if (!$last) {
                    if (!RetryPolicy::failedOver($answer)) {
                        return $answer;
                    }
                    $failed[] = $base;
                    if ($answer !== null && $answer->error === 'service_online') {
                        $i = $count - 2;
                    }
                    break;
                }
                $delay = RetryPolicy::delay($answer, $retry, $this->config->maxRetries, $retryRateLimited, $this->random);
                if ($delay === null) {
                    if ($answer === null) {
                        throw self::connectionError($url, $failure, $retry + 1, $failed);
                    }
                    return $answer;
                }
                ($this->sleep)($delay);
            }
        }
        throw new \LogicException('Gatehouse: send() was given an empty route.');
    }

    /**
     * One HTTP request, with the app's credentials unless $public (GET /v1/standby needs none); throws
     * TransportException without an answer.
     */
    public function attempt(string $url, string $method, ?string $body, ?string $contentType, bool $public = false): Answer
    {
        $headers = $public ? [] : ['X-App-Key' => $this->config->appKey, 'X-App-Secret' => $this->config->appSecret];
        $headers += [
            'Accept' => 'application/json',
            'User-Agent' => 'gatehouse-php/' . self::VERSION . ' (PHP ' . PHP_VERSION . ')',
        ];
        if ($contentType !== null) {
            $headers['Content-Type'] = $contentType;
        }
        $response = $this->config->httpClient->request($method, $url, $headers, $body, $this->config->timeout);
        return Answer::fromResponse($url, $response);
    }

    /** @param list<string> $failed backup hosts that failed before the last one */
    private static function connectionError(string $url, ?TransportException $failure, int $attempts, array $failed): ConnectionException
    {
        $timedOut = $failure !== null && $failure->timedOut;
        $message = sprintf(
            'Could not reach Gatehouse at %s (%s): %s.',
            $url,
            $attempts === 1 ? '1 attempt' : "$attempts attempts",
            $failure !== null ? rtrim($failure->getMessage(), '.') : 'no answer',
        );
        if ($failed !== []) {
            $message .= ' The backup hosts ' . implode(', ', $failed) . ' failed before it.';
        }
        return new ConnectionException($message, $timedOut ? 'timeout' : 'network_error', null, null, $failure);
    }
}
