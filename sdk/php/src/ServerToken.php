<?php

declare(strict_types=1);

namespace Gatehouse;

/** An issued server token: hand $serverToken to the page, which gives it to the widget. */
final class ServerToken
{
    public function __construct(
        /** `sct_...`. */
        public readonly string $serverToken,
        /** Lifetime in seconds. */
        public readonly int $expiresIn,
        /** Unix seconds. */
        public readonly int $issuedAt,
    ) {
    }
}
