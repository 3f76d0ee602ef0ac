<?php

declare(strict_types=1);

namespace Gatehouse\Exception;

/** The client was constructed or called wrongly; nothing was sent. The message is one precise sentence. */
final class ConfigException extends GatehouseException
{
    public function __construct(string $sentence)
    {
        parent::__construct('Gatehouse: ' . $sentence, 'invalid_config');
    }
}
