<?php

declare(strict_types=1);

namespace Gatehouse\Exception;

/** The API refused the request as malformed (`invalid_request` and other 4xx): a bug in the calling code. */
final class InvalidRequestException extends GatehouseException
{
}
