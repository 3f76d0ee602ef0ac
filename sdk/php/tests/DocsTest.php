<?php

declare(strict_types=1);

namespace Gatehouse\Tests;

use PHPUnit\Framework\TestCase;

/**
 * docs/sdk-php.md is executable: every block after `<!-- example: NAME [token=ACTION] -->` is a script, run
 * against the real API with PASS_TOKEN solved for ACTION, beside a `gatehouse-php` link to this SDK; each
 * `// prints: X` comment must be exactly the matching line the script prints.
 */
final class DocsTest extends TestCase
{
    private const DOC = __DIR__ . '/../../../docs/sdk-php.md';

    /** @return list<array{name: string, token: string, code: string}> */
    private static function examples(): array
    {
        preg_match_all('/<!-- example: ([\w-]+)(?: token=(\w+))? -->\n```php\n(.*?)```/s', (string) file_get_contents(self::DOC), $m, PREG_SET_ORDER);
        return array_map(fn (array $x) => ['name' => $x[1], 'token' => $x[2], 'code' => $x[3]], $m);
    }

    public function testTheExamplesItPromises(): void
    {
        self::assertSame(['validate', 'wrong-action', 'errors', 'server-token'], array_column(self::examples(), 'name'));
        foreach (self::examples() as $example) {
            $file = tempnam(sys_get_temp_dir(), 'gatehouse-doc');
            file_put_contents($file, $example['code']);
            exec(escapeshellarg(PHP_BINARY) . ' -l ' . escapeshellarg($file) . ' 2>&1', $out, $status);
            unlink($file);
            self::assertSame(0, $status, $example['name'] . ': ' . implode("\n", $out));
        }
    }

    /** @return iterable<string, array{array{name: string, token: string, code: string}}> */
    public static function runnable(): iterable
    {
        foreach (self::examples() as $example) {
            yield $example['name'] => [$example];
        }
    }

    /** @dataProvider runnable */
    public function testExamplePrintsWhatItsCommentsSay(array $example): void
    {
        $api = IntegrationTest::api();
        $dir = sys_get_temp_dir() . '/gatehouse-php-docs-' . bin2hex(random_bytes(6));
        mkdir($dir);
        symlink(realpath(__DIR__ . '/..'), "$dir/gatehouse-php");
        file_put_contents("$dir/example.php", $example['code']);
        $env = [
            'PATH' => (string) getenv('PATH'),
            'GATEHOUSE_URL' => $api['url'],
            'GATEHOUSE_APP_KEY' => $api['key'],
            'GATEHOUSE_APP_SECRET' => $api['secret'],
            // The SDK's default standby cache lives in the temporary folder: the example's, removed below.
            'TMPDIR' => $dir,
        ];
        if ($example['token'] !== '') {
            $env['PASS_TOKEN'] = IntegrationTest::solve($example['token']);
        }
        try {
            $process = proc_open([PHP_BINARY, "$dir/example.php"], [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, $dir, $env);
            $stdout = stream_get_contents($pipes[1]);
            $stderr = stream_get_contents($pipes[2]);
            $status = proc_close($process);
        } finally {
            unlink("$dir/gatehouse-php");
            array_map('unlink', glob("$dir/*"));
            rmdir($dir);
        }
        self::assertSame('', $stderr);
        self::assertSame(0, $status, $stdout);
        preg_match_all('#// prints: (.*)$#m', $example['code'], $m);
        self::assertNotEmpty($m[1]);
        self::assertSame(array_map('trim', $m[1]), explode("\n", rtrim($stdout, "\n")));
    }
}
