<?php

declare(strict_types=1);

namespace Gatehouse\Tests\Support;

/** Runs tests/Fixtures/fake-hosts.php for one vector case and reads back what it recorded. */
final class FakeHosts
{
    /** @var array<string, string> host name => base URL */
    public readonly array $urls;
    /** @var resource */
    private $process;
    private string $dir;

    /**
     * @param array<string, mixed> $answers the case's answers
     * @param array<string, int> $ports fixed ports for some hosts (the others are free ports)
     */
    public function __construct(array $answers, array $ports = [])
    {
        $this->dir = sys_get_temp_dir() . '/gatehouse-php-vectors-' . bin2hex(random_bytes(6));
        mkdir($this->dir);
        file_put_contents("$this->dir/case.json", json_encode((object) $answers));
        touch("$this->dir/log.jsonl");
        $this->process = proc_open(
            [PHP_BINARY, __DIR__ . '/../Fixtures/fake-hosts.php', "$this->dir/case.json", "$this->dir/log.jsonl", json_encode((object) $ports)],
            [1 => ['pipe', 'w'], 2 => ['file', "$this->dir/stderr", 'w']],
            $pipes,
        );
        $line = fgets($pipes[1]);
        $urls = json_decode((string) $line, true);
        if (!is_array($urls)) {
            throw new \RuntimeException('fake hosts did not start: ' . @file_get_contents("$this->dir/stderr"));
        }
        $this->urls = $urls;
    }

    /** @return list<array<string, mixed>> the requests, in arrival order across hosts */
    public function records(): array
    {
        $records = [];
        foreach (file("$this->dir/log.jsonl", FILE_IGNORE_NEW_LINES | FILE_SKIP_EMPTY_LINES) ?: [] as $line) {
            $records[] = json_decode($line, true);
        }
        return $records;
    }

    /** What the fake hosts complained about (unexpected requests). */
    public function complaints(): string
    {
        return (string) @file_get_contents("$this->dir/stderr");
    }

    public function url(string $name): string
    {
        return $this->urls[$name] ?? throw new \InvalidArgumentException("unknown host $name");
    }

    public function stop(): void
    {
        proc_terminate($this->process);
        proc_close($this->process);
        foreach (glob("$this->dir/*") ?: [] as $file) {
            unlink($file);
        }
        @rmdir($this->dir);
    }
}
