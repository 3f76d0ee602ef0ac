<?php

declare(strict_types=1);

namespace Gatehouse\Internal;

use Gatehouse\HttpClient\TransportException;

/**
 * The backup API hosts (the standby's `fallbackapiv1.` hosts) that validate `offline_` tokens: given as
 * `backup_servers`, or discovered with GET /v1/standby on the first request to the main API, kept, and
 * refreshed every TTL seconds. Discovery happens while the main API is up, which is when it can answer: by
 * the time an `offline_` token arrives the main API may be down. PHP processes are short-lived, so the
 * list is also kept in a small JSON file (`standby_cache`) that every process of the app shares.
 *
 * @internal
 */
final class StandbyHosts
{
    /** Seconds a discovered list is used before it is fetched again (on a later call). */
    public const TTL = 600;
    /** Seconds after a failed discovery (no answer, 5xx) before the next one may be tried. */
    public const RETRY = 30;
    /** A published list is cut at this many hosts: two are deployed, a few more are tolerated. */
    public const MAX_HOSTS = 8;

    /** @var list<string>|null null until an answer was had */
    private ?array $hosts = null;
    private int $fetchedAt = 0;
    private int $failedAt = 0;
    private bool $loaded = false;
    /** @var \Closure(): int */
    private \Closure $now;

    public function __construct(private readonly Config $config, private readonly Transport $transport, ?\Closure $now = null)
    {
        $this->now = $now ?? static fn (): int => time();
    }

    /**
     * The backup hosts to try, discovered first when due. For an `offline_` token a list already known is
     * used as is, never refreshed first: the main API is probably down, and asking would cost a timeout.
     *
     * @return list<string>
     */
    public function get(bool $forOffline): array
    {
        if ($this->config->backupServers !== null) {
            return $this->config->backupServers;
        }
        $this->load();
        $now = ($this->now)();
        $known = $this->hosts !== null;
        $due = !$known || $now - $this->fetchedAt >= self::TTL;
        if ($known && $forOffline) {
            $due = false;
        }
        if ($this->failedAt > 0 && $now - $this->failedAt < self::RETRY) {
            $due = false;
        }
        if ($due) {
            $hosts = $this->discover();
            if ($hosts !== null) {
                [$this->hosts, $this->fetchedAt, $this->failedAt] = [$hosts, $now, 0];
            } else {
                $this->failedAt = $now; // keep what was known: a failed refresh must not forget the hosts
            }
            $this->save();
        }
        return $this->hosts ?? [];
    }

    /**
     * GET /v1/standby once, without retries and without credentials (the list is public): the fallback
     * list, [] for a 404 (an API without the endpoint), or null when there was no usable answer.
     *
     * @return list<string>|null
     */
    private function discover(): ?array
    {
        try {
            $answer = $this->transport->attempt($this->config->baseUrl . '/v1/standby', 'GET', null, null, true);
        } catch (TransportException) {
            return null;
        }
        if ($answer->status === 404) {
            return [];
        }
        if ($answer->status !== 200 || $answer->data === null) {
            return null;
        }
        $hosts = [];
        foreach (is_array($answer->data['fallback'] ?? null) ? $answer->data['fallback'] : [] as $url) {
            if (is_string($url) && preg_match('#^https?://[^/?\#\s]+(/[^?\#\s]*)?$#i', $url) === 1) {
                $url = rtrim($url, '/');
                if ($url !== $this->config->baseUrl && !in_array($url, $hosts, true) && count($hosts) < self::MAX_HOSTS) {
                    $hosts[] = $url;
                }
            }
        }
        return $hosts;
    }

    private function load(): void
    {
        if ($this->loaded) {
            return;
        }
        $this->loaded = true;
        $file = $this->config->standbyCache;
        if ($file === false || !is_file($file)) {
            return;
        }
        $state = json_decode((string) @file_get_contents($file), true);
        if (!is_array($state) || ($state['base_url'] ?? null) !== $this->config->baseUrl) {
            return;
        }
        if (is_array($state['hosts'] ?? null) && array_is_list($state['hosts'])) {
            $this->hosts = array_values(array_filter($state['hosts'], 'is_string'));
        }
        $this->fetchedAt = (int) ($state['fetched_at'] ?? 0);
        $this->failedAt = (int) ($state['failed_at'] ?? 0);
    }

    /** Writes the state atomically (a temporary file renamed over the cache); a failure to write is not an error. */
    private function save(): void
    {
        $file = $this->config->standbyCache;
        if ($file === false) {
            return;
        }
        $state = json_encode([
            'base_url' => $this->config->baseUrl,
            'hosts' => $this->hosts,
            'fetched_at' => $this->fetchedAt,
            'failed_at' => $this->failedAt,
        ]);
        $tmp = $file . '.' . bin2hex(random_bytes(4)) . '.tmp';
        if (@file_put_contents($tmp, $state) !== false && !@rename($tmp, $file)) {
            @unlink($tmp);
        }
    }
}
