<?php

declare(strict_types=1);

namespace Gatehouse\Exception;

/** `invalid_app_key`, `invalid_app_secret` or `app_disabled`: the credentials are wrong, retrying cannot help. */
final class AuthenticationException extends GatehouseException
{
}
