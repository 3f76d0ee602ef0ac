<?php

declare(strict_types=1);

/*
 * Without Composer: require this file once. It maps Gatehouse\Foo\Bar to src/Foo/Bar.php (PSR-4).
 * With Composer, composer.json declares the same mapping and this file is not needed.
 */
spl_autoload_register(static function (string $class): void {
    $prefix = 'Gatehouse\\';
    if (strncmp($class, $prefix, strlen($prefix)) !== 0) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
