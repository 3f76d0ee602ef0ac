<?php

declare(strict_types=1);

namespace Gatehouse;

use Gatehouse\Exception\ApiException;
use Gatehouse\Exception\ConfigException;
use Gatehouse\Exception\ConnectionException;
use Gatehouse\Exception\GatehouseException;
use Gatehouse\Internal\Config;
use Gatehouse\Internal\Errors;
use Gatehouse\Internal\StandbyHosts;
use Gatehouse\Internal\Transport;

/**
 * Gatehouse server SDK: construct once with the app's key and secret, then validate() the pass tokens
 * your forms receive and, optionally, issueServerToken() ahead of a challenge.
 *
 *     $gatehouse = new Gatehouse\Client(['app_key' => 'ak_...', 'app_secret' => 'sk_...', 'base_url' => '...']);
 *     $gatehouse = new Gatehouse\Client('ak_...', 'sk_...', ['base_url' => '...']);
 */
final class Client
{
    private const MAX_TOKEN_LENGTH = 1024;
    private const IDEMPOTENCY_KEY = '/^[A-Za-z0-9_.:-]{1,128}$/';
    private const VALIDATE_OPTIONS = ['client_ip', 'expected_action', 'idempotency_key'];
    private const ISSUE_FIELDS = [
        'action' => 'string', 'ttl' => 'int', 'max_uses' => 'int', 'bind_ip' => 'string',
        'bind_device_id' => 'string', 'bind_fingerprint' => 'string', 'bind_uid' => 'string',
    ];

    private readonly Config $config;
    private readonly Transport $transport;
    private readonly StandbyHosts $standby;

    /**
     * @param array<string, mixed>|string $config the options (app_key, app_secret, base_url, backup_servers,
     *     timeout, max_retries, http_client, standby_cache), or the app key followed by the secret and the other options
     * @param array<string, mixed> $options with a string $config: the options other than app_key and app_secret
     * @throws ConfigException one precise sentence naming the first mistake
     */
    public function __construct(array|string $config, ?string $appSecret = null, array $options = [])
    {
        if (is_string($config)) {
            if (isset($options['app_key']) || isset($options['app_secret'])) {
                throw new ConfigException('give the app key and secret either as arguments or as options, not both.');
            }
            $config = ['app_key' => $config, 'app_secret' => $appSecret] + $options;
        } elseif ($appSecret !== null || $options !== []) {
            throw new ConfigException("with an array of options, pass nothing else: new Client(['app_key' => ..., 'app_secret' => ...]).");
        }
        $this->config = Config::fromArray($config);
        $this->transport = new Transport($this->config);
        $this->standby = new StandbyHosts($this->config, $this->transport);
    }

    /** The main API's base URL this client talks to. */
    public function getBaseUrl(): string
    {
        return $this->config->baseUrl;
    }

    /**
     * Validates a pass token and consumes it. Whatever the end user sent, the answer is a verdict: replayed,
     * expired, unknown or forged tokens give valid false with errorCode. Throws (GatehouseException) only
     * when no verdict could be had: bad credentials or request, network, 5xx after the retries.
     *
     * `pt_` and `dg_` tokens go to the main API (POST /v1/validate). `offline_` tokens go to each backup API
     * host once, in order (POST /api/validate), then to the main API, which accepts them too;
     * `service_online` from a backup host sends the call to the main API at once. `co_` tokens are
     * client-only: never valid, and no request is made.
     *
     * @param array{client_ip?: string, expected_action?: string, idempotency_key?: string} $options
     */
    public function validate(mixed $token, array $options = []): Verdict
    {
        self::checkOptions($options, self::VALIDATE_OPTIONS, 'validate');
        foreach ($options as $name => $value) {
            if (!is_string($value) || $value === '') {
                throw new ConfigException("validate's $name must be a non-empty string; got " . get_debug_type($value) . '.');
            }
        }
        $key = $options['idempotency_key'] ?? null;
        if ($key !== null && preg_match(self::IDEMPOTENCY_KEY, $key) !== 1) {
            throw new ConfigException('idempotency_key must be 1 to 128 characters of letters, digits, _ . : or -.');
        }
        // 1. Untrusted input: a missing or oversized token is an answer, not an exception, and costs no request.
        if (!is_string($token) || $token === '' || strlen($token) > self::MAX_TOKEN_LENGTH) {
            return Verdict::refused('token_not_found', false, null);
        }
        // 2. Client-only tokens come from a browser that reached no Gatehouse service: never verifiable.
        if (str_starts_with($token, 'co_')) {
            return Verdict::clientOnly();
        }
        $offline = str_starts_with($token, 'offline_');
        // 3. The route: offline_ tokens to the backup hosts first, everything else to the main API. The
        //    first request of a client discovers the backup hosts, whatever the token.
        $hosts = $this->standby->get($offline);
        $route = [];
        if ($offline) {
            foreach ($hosts as $host) {
                $route[] = [$host, '/api/validate'];
            }
        }
        $route[] = [$this->config->baseUrl, '/v1/validate'];
        // 4. One key for every attempt on every host, so a retry after a lost answer gets the same verdict.
        $body = ['pass_token' => $token, 'idempotency_key' => $key ?? self::newIdempotencyKey()];
        if (isset($options['client_ip'])) {
            $body['client_ip'] = $options['client_ip'];
        }
        // The API checks the action too (token_action_mismatch); `accepted` checks it here as well, for
        // hosts that do not (an older API, the standby's fallback). A string no token can carry as its
        // action is not sent: the API would refuse the request, and `accepted` is false for it anyway.
        if (is_string($options['expected_action'] ?? null) && preg_match('/^[A-Za-z0-9_.:-]{1,64}$/D', $options['expected_action']) === 1) {
            $body['action'] = $options['expected_action'];
        }
        try {
            $answer = $this->transport->send($route, 'POST', json_encode($body, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES), 'application/json');
        } catch (ConnectionException $e) {
            // Gatehouse out of reach: the token could not be checked; the page should verify again.
            throw $e->markReverify();
        }
        // 5. A success is a verdict; so are the token errors. Anything else throws.
        if ($answer->isSuccess()) {
            return Verdict::fromData($answer->data, $offline, $options['expected_action'] ?? null, $answer->requestId);
        }
        if ($answer->error !== null && in_array($answer->error, Verdict::TOKEN_ERRORS, true)) {
            return Verdict::refused($answer->error, $offline, $answer->requestId, $answer->errorData);
        }
        $error = Errors::fromAnswer($answer);
        if (in_array($answer->status, [502, 503, 504], true) && $answer->error !== 'service_online') {
            $error->markReverify();
        }
        throw $error;
    }

    /**
     * Issues a server token (POST /v1/server/challenge/issue, form-urlencoded as the spec shows), always on
     * the main API. A 429 `rate_limit_exceeded` is retried after the API's Retry-After, within max_retries
     * and when the wait is at most 10 s; network errors and 5xx are retried with backoff.
     *
     * @param array{action: string, ttl?: int, max_uses?: int, bind_ip?: string, bind_device_id?: string, bind_fingerprint?: string, bind_uid?: string} $params
     * @throws GatehouseException
     */
    public function issueServerToken(array $params): ServerToken
    {
        self::checkOptions($params, array_keys(self::ISSUE_FIELDS), 'issueServerToken');
        if (!is_string($params['action'] ?? null) || $params['action'] === '') {
            throw new ConfigException("issueServerToken needs ['action' => ...], the scene such as login.");
        }
        $form = [];
        foreach ($params as $field => $value) {
            $type = self::ISSUE_FIELDS[$field];
            if (($type === 'int' && !is_int($value)) || ($type === 'string' && !is_string($value))) {
                throw new ConfigException("issueServerToken's $field must be " . ($type === 'int' ? 'a whole number' : 'a string') . '; got ' . get_debug_type($value) . '.');
            }
            $form[$field] = (string) $value;
        }
        $this->standby->get(false); // first contact: learn the backup hosts while the main API answers
        $answer = $this->transport->send(
            [[$this->config->baseUrl, '/v1/server/challenge/issue']],
            'POST',
            http_build_query($form, '', '&', PHP_QUERY_RFC3986),
            'application/x-www-form-urlencoded',
            true,
        );
        if (!$answer->isSuccess()) {
            throw Errors::fromAnswer($answer);
        }
        $d = $answer->data;
        if (!is_string($d['server_token'] ?? null) || !is_int($d['expires_in'] ?? null) || !is_int($d['issued_at'] ?? null)) {
            throw new ApiException(
                "{$answer->url} answered without server_token, expires_in and issued_at.",
                'unexpected_response',
                $answer->status,
                $answer->requestId,
            );
        }
        return new ServerToken($d['server_token'], $d['expires_in'], $d['issued_at']);
    }

    /** @param array<mixed> $options @param list<string> $known */
    private static function checkOptions(array $options, array $known, string $method): void
    {
        foreach (array_keys($options) as $name) {
            if (!in_array($name, $known, true)) {
                throw new ConfigException("unknown $method option $name; the options are " . implode(', ', $known) . '.');
            }
        }
    }

    /** idem_ and a random UUID (version 4). */
    private static function newIdempotencyKey(): string
    {
        $b = random_bytes(16);
        $b[6] = chr(ord($b[6]) & 0x0f | 0x40);
        $b[8] = chr(ord($b[8]) & 0x3f | 0x80);
        return 'idem_' . vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($b), 4));
    }
}
