<?php

declare(strict_types=1);

namespace Gatehouse\Internal;

/**
 * Retries as data: what is retried, how long to wait, and the ceiling. Only outcomes where a second try
 * can give a different answer are retried: no HTTP answer at all, or a 5xx other than `service_online`
 * (which says the URL is wrong). A 4xx is an answer. Validation stays safe to retry because every attempt
 * of one call carries the same idempotency key.
 *
 * @internal
 */
final class RetryPolicy
{
    /** First backoff in seconds; each retry doubles it, up to CEILING (before jitter). */
    public const BASE = 0.2;
    public const CEILING = 2.0;
    /** The longest Retry-After a 429 is retried after; above it the error is thrown at once. */
    public const MAX_RETRY_AFTER = 10;

    /**
     * Seconds to wait before retry number $retry (0-based) of the same host, or null to stop.
     *
     * @param Answer|null $answer null when the attempt got no HTTP answer
     * @param callable(): float $random a number in [0, 1)
     */
    public static function delay(?Answer $answer, int $retry, int $maxRetries, bool $retryRateLimited, callable $random): ?float
    {
        if ($retry >= $maxRetries) {
            return null;
        }
        if ($answer === null || ($answer->status >= 500 && $answer->error !== 'service_online')) {
            return self::backoff($retry, $random);
        }
        if ($answer->status === 429 && $retryRateLimited) {
            $after = $answer->retryAfter ?? 1;
            if ($after > self::MAX_RETRY_AFTER) {
                return null;
            }
            // A little jitter on top, so instances throttled together do not come back in the same millisecond.
            return $after + $random() * 0.1;
        }
        return null;
    }

    /** Exponential backoff with "equal jitter": half the step for sure, the other half random; capped. */
    public static function backoff(int $retry, callable $random): float
    {
        $step = min(self::CEILING, self::BASE * 2 ** min($retry, 30));
        return $step / 2 + $random() * ($step / 2);
    }

    /** Whether a host failed so that the call moves on: no answer, or a 5xx (`service_online` included). */
    public static function failedOver(?Answer $answer): bool
    {
        return $answer === null || $answer->status >= 500;
    }
}
