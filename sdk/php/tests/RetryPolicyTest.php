<?php

declare(strict_types=1);

namespace Gatehouse\Tests;

use Gatehouse\HttpClient\Response;
use Gatehouse\Internal\Answer;
use Gatehouse\Internal\RetryPolicy;
use PHPUnit\Framework\TestCase;

final class RetryPolicyTest extends TestCase
{
    private static function answer(int $status, ?string $error = null, array $headers = []): Answer
    {
        $body = $error === null ? '{"code":0,"data":{}}' : json_encode(['code' => -1, 'error' => $error, 'message' => $error]);
        return Answer::fromResponse('http://x/v1/validate', new Response($status, $headers, $body), 1_000_000);
    }

    public function testBackoffIsExponentialWithEqualJitterAndCapped(): void
    {
        $none = fn () => 0.0;
        $full = fn () => 0.999999;
        foreach ([[0, 0.1, 0.2], [1, 0.2, 0.4], [2, 0.4, 0.8], [4, 1.0, 2.0], [60, 1.0, 2.0]] as [$retry, $low, $top]) {
            self::assertEqualsWithDelta($low, RetryPolicy::backoff($retry, $none), 1e-9, "retry $retry");
            self::assertLessThanOrEqual($top, RetryPolicy::backoff($retry, $full));
        }
    }

    public function testWhatIsRetried(): void
    {
        $r = fn () => 0.0;
        self::assertEqualsWithDelta(0.1, RetryPolicy::delay(null, 0, 2, false, $r), 1e-9);
        self::assertEqualsWithDelta(0.2, RetryPolicy::delay(self::answer(500, 'internal_error'), 1, 2, false, $r), 1e-9);
        self::assertNull(RetryPolicy::delay(self::answer(500, 'internal_error'), 2, 2, false, $r), 'budget spent');
        self::assertNull(RetryPolicy::delay(self::answer(503, 'service_online'), 0, 2, false, $r));
        self::assertNull(RetryPolicy::delay(self::answer(409, 'token_already_used'), 0, 2, false, $r));
        self::assertNull(RetryPolicy::delay(self::answer(429, 'rate_limited', ['retry-after' => '1']), 0, 2, false, $r));
        self::assertEqualsWithDelta(3.0, RetryPolicy::delay(self::answer(429, 'rate_limit_exceeded', ['retry-after' => '3']), 0, 2, true, $r), 1e-9);
        self::assertEqualsWithDelta(1.0, RetryPolicy::delay(self::answer(429, 'rate_limit_exceeded'), 0, 2, true, $r), 1e-9);
        self::assertNull(RetryPolicy::delay(self::answer(429, 'rate_limit_exceeded', ['retry-after' => '60']), 0, 2, true, $r));
    }

    public function testRetryAfterParsing(): void
    {
        $now = gmmktime(12, 0, 0, 11, 21, 2026);
        self::assertNull(Answer::retryAfter(null, $now));
        self::assertSame(7, Answer::retryAfter('7', $now));
        self::assertSame(5, Answer::retryAfter('Sat, 21 Nov 2026 12:00:05 GMT', $now));
        self::assertSame(0, Answer::retryAfter('Sat, 21 Nov 2026 11:00:00 GMT', $now));
        self::assertNull(Answer::retryAfter('soon', $now));
        self::assertNull(Answer::retryAfter('-1', $now));
    }

    public function testEnvelopeParsing(): void
    {
        self::assertSame(['valid' => true], Answer::fromResponse('u', new Response(200, [], '{"code":0,"data":{"valid":true}}'))->data);
        self::assertNull(Answer::fromResponse('u', new Response(200, [], '{"code":0,"data":[1]}'))->error);
        self::assertNull(Answer::fromResponse('u', new Response(200, [], '[0]'))->data);
        self::assertNull(Answer::fromResponse('u', new Response(500, [], '<html>'))->error);
        $e = Answer::fromResponse('u', new Response(401, ['x-request-id' => 'r1'], '{"code":-1,"error":"invalid_app_key"}'));
        self::assertSame(['invalid_app_key', 'invalid_app_key', 'r1'], [$e->error, $e->message, $e->requestId]);
    }
}
