<?php

declare(strict_types=1);

namespace Gatehouse\Internal;

use Gatehouse\HttpClient\Response;

/**
 * An HTTP answer read as Gatehouse's envelope: `{code: 0, data}` or `{code: -1, error, message}`; any other
 * body (a proxy's page, truncated JSON) leaves both null.
 *
 * @internal
 */
final class Answer
{
    /**
     * @param array<string, mixed>|null $data
     * @param array<string, mixed> $errorData data of an error envelope: a token verdict's action, client IP check
     */
    private function __construct(
        public readonly string $url,
        public readonly int $status,
        public readonly ?string $requestId,
        public readonly ?int $retryAfter,
        public readonly ?array $data,
        public readonly ?string $error,
        public readonly ?string $message,
        public readonly array $errorData = [],
    ) {
    }

    public static function fromResponse(string $url, Response $response, ?int $now = null): self
    {
        $data = null;
        $error = null;
        $errorData = [];
        $message = null;
        try {
            $value = json_decode($response->body, true, 64, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
        } catch (\JsonException) {
            $value = null;
        }
        if (is_array($value) && !array_is_list($value)) {
            if (($value['code'] ?? null) === 0 && is_array($value['data'] ?? null)) {
                $data = $value['data'];
            } elseif (($value['code'] ?? null) === -1 && is_string($value['error'] ?? null) && $value['error'] !== '') {
                $error = $value['error'];
                $message = is_string($value['message'] ?? null) && $value['message'] !== '' ? $value['message'] : $error;
                $errorData = is_array($value['data'] ?? null) && !array_is_list($value['data']) ? $value['data'] : [];
            }
        }
        return new self(
            $url,
            $response->status,
            $response->header('x-request-id'),
            self::retryAfter($response->header('retry-after'), $now ?? time()),
            $data,
            $error,
            $message,
            $errorData,
        );
    }

    /** Whether the answer is a success envelope. */
    public function isSuccess(): bool
    {
        return $this->data !== null && $this->status < 300;
    }

    /** Retry-After as seconds: delta-seconds or an HTTP date; null when absent or unreadable. */
    public static function retryAfter(?string $header, int $now): ?int
    {
        $header = trim((string) $header);
        if ($header === '') {
            return null;
        }
        if (preg_match('/^\d{1,6}$/', $header) === 1) {
            return (int) $header;
        }
        $date = strtotime($header);
        if ($date === false || preg_match('/[A-Za-z]{3}/', $header) !== 1) {
            return null;
        }
        return max(0, $date - $now);
    }
}
