<?php

declare(strict_types=1);

namespace Gatehouse\Exception;

/** A 429 (after the bounded retries, for server-token issuance). */
final class RateLimitException extends GatehouseException
{
    public function __construct(
        string $message,
        string $errorCode,
        ?int $status,
        ?string $requestId,
        private readonly ?int $retryAfter,
    ) {
        parent::__construct($message, $errorCode, $status, $requestId);
    }

    /** The API's Retry-After in seconds, when it sent one. */
    public function getRetryAfter(): ?int
    {
        return $this->retryAfter;
    }
}
