<?php

declare(strict_types=1);

/*
 * The fake hosts of the shared vectors (sdk/test-vectors/README.md): main, fallback1 and fallback2 on
 * three ports of one process, serving one case's scripted answers and logging every request as a JSON
 * line. Usage: php fake-hosts.php CASE.json LOG.jsonl [PORTS_JSON]; prints {"main": url, ...} on its first
 * line, then serves until it is terminated. PORTS_JSON ({"fallback1": 8123}) fixes some ports.
 */

[$self, $caseFile, $logFile] = $argv;
$ports = json_decode($argv[3] ?? '{}', true);
$answers = json_decode((string) file_get_contents($caseFile), true, 512, JSON_THROW_ON_ERROR);

$listeners = [];
$urls = [];
foreach (['main', 'fallback1', 'fallback2'] as $host) {
    $server = stream_socket_server('tcp://127.0.0.1:' . ($ports[$host] ?? 0), $errno, $errstr);
    if ($server === false) {
        fwrite(STDERR, "listen: $errstr\n");
        exit(1);
    }
    stream_set_blocking($server, false);
    $listeners[$host] = $server;
    $urls[$host] = 'http://' . stream_socket_get_name($server, false);
}
echo json_encode($urls), "\n";
fflush(STDOUT);

$next = ['main' => 0, 'fallback1' => 0, 'fallback2' => 0];
$reading = []; // id => [host, socket, buffer]
$held = [];    // connections answered "timeout": kept open, never answered

$log = static function (array $record) use ($logFile): void {
    $record['at'] = microtime(true);
    file_put_contents($logFile, json_encode($record) . "\n", FILE_APPEND | LOCK_EX);
};

while (true) {
    $read = array_values($listeners);
    foreach ($reading as [, $socket]) {
        $read[] = $socket;
    }
    $write = $except = null;
    if (@stream_select($read, $write, $except, 1) === false) {
        continue;
    }
    foreach ($read as $socket) {
        $host = array_search($socket, $listeners, true);
        if ($host !== false) {
            $conn = @stream_socket_accept($socket, 0);
            if ($conn === false) {
                continue;
            }
            if (($answers[$host] ?? null) === 'unreachable') {
                $log(['host' => $host, 'observed' => false]);
                fclose($conn);
                continue;
            }
            stream_set_blocking($conn, false);
            $reading[(int) $conn] = [$host, $conn, ''];
            continue;
        }
        $id = (int) $socket;
        [$host, $conn, $buffer] = $reading[$id];
        $chunk = fread($conn, 65536);
        if ($chunk === '' || $chunk === false) {
            if (feof($conn)) {
                unset($reading[$id]);
                fclose($conn);
            }
            continue;
        }
        $buffer .= $chunk;
        $reading[$id][2] = $buffer;
        $end = strpos($buffer, "\r\n\r\n");
        if ($end === false) {
            continue;
        }
        $head = explode("\r\n", substr($buffer, 0, $end));
        [$method, $target] = explode(' ', array_shift($head));
        $headers = [];
        foreach ($head as $line) {
            [$name, $value] = array_map('trim', explode(':', $line, 2)) + [1 => ''];
            $headers[strtolower($name)] = $value;
        }
        $body = substr($buffer, $end + 4);
        if (strlen($body) < (int) ($headers['content-length'] ?? 0)) {
            continue;
        }
        unset($reading[$id]);
        $log(['host' => $host, 'observed' => true, 'method' => $method, 'path' => parse_url($target, PHP_URL_PATH), 'headers' => $headers, 'body' => $body]);

        $script = is_array($answers[$host] ?? null) ? $answers[$host] : [];
        $answer = $script[$next[$host]++] ?? null;
        if ($answer === null) {
            fwrite(STDERR, "unexpected request #{$next[$host]} to $host: $method $target $body\n");
            $answer = ['status' => 599, 'raw' => 'unexpected request'];
        }
        if ($answer === 'drop') {
            fclose($conn);
            continue;
        }
        if ($answer === 'timeout') {
            $held[] = $conn;
            continue;
        }
        $out = array_key_exists('raw', $answer) ? $answer['raw'] : json_encode($answer['body'], JSON_UNESCAPED_SLASHES);
        $out = strtr($out, ['{main}' => $urls['main'], '{fallback1}' => $urls['fallback1'], '{fallback2}' => $urls['fallback2']]);
        $extra = $answer['headers'] ?? [];
        if (!array_key_exists('raw', $answer) && !isset($extra['Content-Type'])) {
            $extra['Content-Type'] = 'application/json';
        }
        $response = "HTTP/1.1 {$answer['status']} Canned\r\nContent-Length: " . strlen($out) . "\r\nConnection: close\r\n";
        foreach ($extra as $name => $value) {
            $response .= "$name: $value\r\n";
        }
        stream_set_blocking($conn, true);
        fwrite($conn, $response . "\r\n" . $out);
        fclose($conn);
    }
}
