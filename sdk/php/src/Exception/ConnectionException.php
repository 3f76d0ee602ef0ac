<?php

declare(strict_types=1);

namespace Gatehouse\Exception;

/** No HTTP answer after every retry (`network_error`: refused, reset, DNS) or none within the timeout (`timeout`). */
final class ConnectionException extends GatehouseException
{
}
