<?php

declare(strict_types=1);

namespace Gatehouse\Internal;

use Gatehouse\Exception\ApiException;
use Gatehouse\Exception\AuthenticationException;
use Gatehouse\Exception\GatehouseException;
use Gatehouse\Exception\InvalidRequestException;
use Gatehouse\Exception\RateLimitException;

/**
 * The one place an answer that is not a success becomes an exception.
 *
 * @internal
 */
final class Errors
{
    private const AUTHENTICATION = ['invalid_app_key', 'invalid_app_secret', 'app_disabled'];

    public static function fromAnswer(Answer $a): GatehouseException
    {
        if ($a->error === null) {
            return new ApiException(
                sprintf('%s answered HTTP %d without a Gatehouse envelope: is base_url the Gatehouse API?', $a->url, $a->status),
                'unexpected_response',
                $a->status,
                $a->requestId,
            );
        }
        if ($a->error === 'service_online') {
            return new ApiException(
                sprintf("%s (%s is a standby host: set base_url to the main API's base URL and leave failover to the SDK)", $a->message, $a->url),
                $a->error,
                $a->status,
                $a->requestId,
            );
        }
        if (in_array($a->error, self::AUTHENTICATION, true)) {
            return new AuthenticationException((string) $a->message, $a->error, $a->status, $a->requestId);
        }
        if ($a->status === 429) {
            return new RateLimitException((string) $a->message, $a->error, $a->status, $a->requestId, $a->retryAfter);
        }
        if ($a->status >= 400 && $a->status < 500) {
            return new InvalidRequestException((string) $a->message, $a->error, $a->status, $a->requestId);
        }
        return new ApiException((string) $a->message, $a->error, $a->status, $a->requestId);
    }
}
