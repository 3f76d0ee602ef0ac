<?php

declare(strict_types=1);

namespace Gatehouse\Exception;

/**
 * The SDK's one error family: `catch (GatehouseException $e)` catches everything it throws. A verdict is a
 * result, never an exception: these are thrown only when no verdict could be had (transport,
 * authentication, configuration, the API refusing the request). Each carries the API's error code, the HTTP
 * status and the request id when there was an answer.
 */
class GatehouseException extends \RuntimeException
{
    private bool $reverify = false;

    public function __construct(
        string $message,
        private readonly string $errorCode,
        private readonly ?int $status = null,
        private readonly ?string $requestId = null,
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, 0, $previous);
    }

    /** The API's error code (`invalid_app_secret`...) or the SDK's own (`invalid_config`, `network_error`, `timeout`, `unexpected_response`). */
    public function getErrorCode(): string
    {
        return $this->errorCode;
    }

    /**
     * validate() only: Gatehouse could not be reached to check the token (no answer, or a 502/503/504
     * other than service_online), so the token may well be good. Not a verdict on the visitor: have the
     * page verify again (Gatehouse.reverify in the widget), which fails over to a standby host and yields
     * an offline_ token this SDK validates there.
     */
    public function shouldReverify(): bool
    {
        return $this->reverify;
    }

    /** @internal set by Client::validate */
    public function markReverify(): static
    {
        $this->reverify = true;
        return $this;
    }

    /** HTTP status of the answer; null when there was none (configuration, network). */
    public function getStatus(): ?int
    {
        return $this->status;
    }

    /** The API's X-Request-Id for this answer, for support and logs; null without an answer. */
    public function getRequestId(): ?string
    {
        return $this->requestId;
    }
}
