<?php

declare(strict_types=1);

namespace Gatehouse;

/** Context recorded when the challenge was solved (the spec's captcha_args), for logs and risk scoring. */
final class CaptchaArgs
{
    public function __construct(
        /** `web`, `android`, `ios`, `flutter`, `windows`...: open-ended. */
        public readonly string $platform,
        /** The end user's IP seen at solve time. */
        public readonly string $userIp,
        /** Solve page URL on web; null on native. */
        public readonly ?string $referer,
        /** Package or bundle id on native; null on web. */
        public readonly ?string $pkg,
        /** Unix seconds. */
        public readonly int $solvedAt,
        /** 0 (safe) to 100 (risky). */
        public readonly int $riskScore,
    ) {
    }

    /** @internal Reads captcha_args from an answer; unexpected types read as absent. */
    public static function fromArray(mixed $raw): ?self
    {
        if (!is_array($raw)) {
            return null;
        }
        $text = static fn (mixed $v): ?string => is_string($v) ? $v : null;
        $int = static fn (mixed $v): int => is_int($v) || is_float($v) ? (int) $v : 0;
        return new self(
            $text($raw['platform'] ?? null) ?? '',
            $text($raw['user_ip'] ?? null) ?? '',
            $text($raw['referer'] ?? null),
            $text($raw['pkg'] ?? null),
            $int($raw['solved_at'] ?? null),
            $int($raw['risk_score'] ?? null),
        );
    }

    /** @return array{platform: string, user_ip: string, referer: ?string, pkg: ?string, solved_at: int, risk_score: int} */
    public function toArray(): array
    {
        return [
            'platform' => $this->platform,
            'user_ip' => $this->userIp,
            'referer' => $this->referer,
            'pkg' => $this->pkg,
            'solved_at' => $this->solvedAt,
            'risk_score' => $this->riskScore,
        ];
    }
}
