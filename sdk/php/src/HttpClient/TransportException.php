<?php

declare(strict_types=1);

namespace Gatehouse\HttpClient;

/** No HTTP answer: the request may or may not have reached the server. */
final class TransportException extends \RuntimeException
{
    public function __construct(string $reason, public readonly bool $timedOut = false)
    {
        parent::__construct($reason);
    }
}
