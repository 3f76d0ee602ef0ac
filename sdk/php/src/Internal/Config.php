<?php

declare(strict_types=1);

namespace Gatehouse\Internal;

use Gatehouse\Exception\ConfigException;
use Gatehouse\HttpClient\HttpClientInterface;
use Gatehouse\HttpClient\StreamClient;

/**
 * The client's configuration, checked once at construction (after stripe-php's validateConfig): the first
 * mistake throws a ConfigException with one precise sentence.
 *
 * @internal
 */
final class Config
{
    public const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
    public const OPTIONS = ['app_key', 'app_secret', 'base_url', 'backup_servers', 'timeout', 'max_retries', 'http_client', 'standby_cache'];
    /** Standby hosts begin with these labels (spec): they are not an alternative API. */
    private const STANDBY_LABELS = ['bypass.', 'fallbackapiv1.'];

    /**
     * @param list<string>|null $backupServers null: discover them with GET /v1/standby
     */
    private function __construct(
        public readonly string $appKey,
        public readonly string $appSecret,
        public readonly string $baseUrl,
        public readonly ?array $backupServers,
        public readonly float $timeout,
        public readonly int $maxRetries,
        public readonly HttpClientInterface $httpClient,
        public readonly string|false $standbyCache,
    ) {
    }

    /** @param array<mixed> $options */
    public static function fromArray(array $options): self
    {
        foreach (array_keys($options) as $name) {
            if (!in_array($name, self::OPTIONS, true)) {
                throw new ConfigException(sprintf('unknown option %s; the options are %s.', $name, implode(', ', self::OPTIONS)));
            }
        }
        $appKey = self::credential($options['app_key'] ?? null, 'app_key', "the app's public key, ak_...");
        $appSecret = self::credential($options['app_secret'] ?? null, 'app_secret', "the app's secret, sk_...");
        if (str_starts_with($appKey, 'sk_') && str_starts_with($appSecret, 'ak_')) {
            throw new ConfigException('app_key and app_secret are swapped: app_key is the public ak_... value, app_secret the sk_... one.');
        }
        if (str_starts_with($appKey, 'sk_')) {
            throw new ConfigException('app_key starts with sk_: that is a secret; app_key is the public ak_... key.');
        }
        $baseUrl = self::baseUrl($options['base_url'] ?? self::DEFAULT_BASE_URL);
        $backup = null;
        if (array_key_exists('backup_servers', $options)) {
            $list = $options['backup_servers'];
            if (!is_array($list) || !array_is_list($list)) {
                throw new ConfigException('backup_servers must be a list of http:// or https:// URLs (or [] for none); got ' . get_debug_type($list) . '.');
            }
            $backup = [];
            foreach ($list as $url) {
                $url = self::url($url, 'backup_servers');
                if ($url === $baseUrl) {
                    throw new ConfigException("backup_servers lists the base URL $url: backup servers are the standby's fallbackapiv1. hosts.");
                }
                $backup[] = $url;
            }
        }
        $timeout = $options['timeout'] ?? 5;
        if ((!is_int($timeout) && !is_float($timeout)) || $timeout <= 0 || $timeout > 600) {
            throw new ConfigException('timeout must be a number of seconds above 0 and at most 600; got ' . self::show($timeout) . '.');
        }
        $maxRetries = $options['max_retries'] ?? 2;
        if (!is_int($maxRetries) || $maxRetries < 0 || $maxRetries > 10) {
            throw new ConfigException('max_retries must be a whole number from 0 to 10; got ' . self::show($maxRetries) . '.');
        }
        $httpClient = $options['http_client'] ?? new StreamClient();
        if (!$httpClient instanceof HttpClientInterface) {
            throw new ConfigException('http_client must implement Gatehouse\HttpClient\HttpClientInterface; got ' . get_debug_type($httpClient) . '.');
        }
        $cache = $options['standby_cache'] ?? sys_get_temp_dir() . '/gatehouse-standby-' . substr(hash('sha256', $baseUrl), 0, 16) . '.json';
        if ($cache !== false && (!is_string($cache) || $cache === '')) {
            throw new ConfigException('standby_cache must be a file path or false (no file cache); got ' . self::show($cache) . '.');
        }
        return new self($appKey, $appSecret, $baseUrl, $backup, (float) $timeout, $maxRetries, $httpClient, $cache);
    }

    private static function credential(mixed $value, string $name, string $what): string
    {
        if ($value === null || $value === '') {
            throw new ConfigException("$name is required ($what).");
        }
        if (!is_string($value)) {
            throw new ConfigException("$name must be a string ($what); got " . get_debug_type($value) . '.');
        }
        if (preg_match('/\s/', $value) === 1) {
            throw new ConfigException("$name contains whitespace: a trailing newline from a file or an environment variable?");
        }
        if (strlen($value) > 256) {
            throw new ConfigException(sprintf('%s is %d characters long; Gatehouse credentials are under 100.', $name, strlen($value)));
        }
        return $value;
    }

    private static function baseUrl(mixed $value): string
    {
        $url = self::url($value, 'base_url');
        $host = (string) parse_url($url, PHP_URL_HOST);
        foreach (self::STANDBY_LABELS as $label) {
            if (str_starts_with($host, $label)) {
                throw new ConfigException(
                    "base_url points at a standby host ($host); set it to the main API's base URL. Standby hosts are not an "
                    . 'alternative API: they answer service_online while the main API is up.',
                );
            }
        }
        return $url;
    }

    /** An http(s) URL without query, fragment or credentials, without its trailing slash. */
    private static function url(mixed $value, string $name): string
    {
        $must = "$name must be an http:// or https:// URL such as https://gatehouse.example.com; got " . self::show($value) . '.';
        if (!is_string($value)) {
            throw new ConfigException($must);
        }
        $parts = parse_url($value);
        if ($parts === false || !in_array(strtolower($parts['scheme'] ?? ''), ['http', 'https'], true) || ($parts['host'] ?? '') === '') {
            throw new ConfigException($must);
        }
        if (isset($parts['query']) || isset($parts['fragment']) || str_contains($value, '?') || str_contains($value, '#')) {
            throw new ConfigException("$name must not carry a query string or a fragment; got '$value'.");
        }
        if (isset($parts['user']) || isset($parts['pass'])) {
            throw new ConfigException("$name must not carry credentials: use app_key and app_secret.");
        }
        return rtrim($value, '/');
    }

    private static function show(mixed $value): string
    {
        return is_string($value) ? "'$value'" : (is_scalar($value) ? var_export($value, true) : get_debug_type($value));
    }
}
