<?php

declare(strict_types=1);

namespace Gatehouse\HttpClient;

/**
 * HTTP over PHP's own http:// and https:// stream wrappers: no curl, no Composer package. TLS
 * certificates are verified (the openssl extension's defaults).
 */
final class StreamClient implements HttpClientInterface
{
    /** Gatehouse answers are a few hundred bytes; anything past this is not read. */
    private const MAX_BODY = 1048576;

    public function request(string $method, string $url, array $headers, ?string $body, float $timeout): Response
    {
        $lines = ['Connection: close'];
        foreach ($headers as $name => $value) {
            $lines[] = $name . ': ' . $value;
        }
        $context = stream_context_create([
            'http' => [
                'method' => $method,
                'header' => implode("\r\n", $lines),
                'content' => $body ?? '',
                'timeout' => $timeout,
                'ignore_errors' => true, // 4xx and 5xx bodies are envelopes: read them
                'follow_location' => 0,
                'protocol_version' => 1.1,
            ],
        ]);
        $started = microtime(true);
        $warning = null;
        set_error_handler(static function (int $severity, string $message) use (&$warning): bool {
            $warning = $message;
            return true;
        });
        try {
            $stream = fopen($url, 'rb', false, $context);
            if ($stream === false) {
                throw $this->failure($warning, $started, $timeout);
            }
            try {
                $meta = stream_get_meta_data($stream);
                $content = stream_get_contents($stream, self::MAX_BODY);
                if ($content === false || stream_get_meta_data($stream)['timed_out']) {
                    throw new TransportException('no complete answer within the timeout', true);
                }
            } finally {
                fclose($stream);
            }
        } finally {
            restore_error_handler();
        }
        return self::response(is_array($meta['wrapper_data'] ?? null) ? $meta['wrapper_data'] : [], $content);
    }

    /** @param list<string> $lines the status line and header lines, as the wrapper gives them */
    private static function response(array $lines, string $body): Response
    {
        $status = 0;
        $headers = [];
        foreach ($lines as $line) {
            if (preg_match('#^HTTP/\S+\s+(\d{3})#', $line, $m) === 1) {
                $status = (int) $m[1]; // a new answer (after a 100 Continue): start over
                $headers = [];
            } elseif (str_contains($line, ':')) {
                [$name, $value] = explode(':', $line, 2);
                $headers[strtolower(trim($name))] = trim($value);
            }
        }
        if ($status === 0) {
            throw new TransportException('an answer without an HTTP status line');
        }
        return new Response($status, $headers, $body);
    }

    private function failure(?string $warning, float $started, float $timeout): TransportException
    {
        // The wrapper's warning reads "fopen(url): Failed to open stream: <reason>".
        $reason = $warning === null ? 'no answer' : preg_replace('/^.*?[Ff]ailed to open stream: /', '', $warning);
        $timedOut = stripos((string) $reason, 'timed out') !== false || microtime(true) - $started >= $timeout * 0.95;
        return new TransportException($timedOut ? 'no answer within the timeout' : (string) $reason, $timedOut);
    }
}
