<?php

declare(strict_types=1);

namespace Gatehouse\Exception;

/** 5xx after every retry, `service_online` (a standby host was called), or an answer that is not Gatehouse's (`unexpected_response`). */
final class ApiException extends GatehouseException
{
}
