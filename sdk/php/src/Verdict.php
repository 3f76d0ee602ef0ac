<?php

declare(strict_types=1);

namespace Gatehouse;

/** The answer to Client::validate(): a result, never an exception, whatever the end user sent. */
final class Verdict
{
    /**
     * The API error codes that are verdicts, not exceptions. The API answers them with HTTP 200 and the code
     * in data.error too; older servers used 404/409/410, read the same way.
     */
    public const TOKEN_ERRORS = [
        'token_already_used',
        'token_expired',
        'token_not_found',
        'token_action_mismatch',
        'client_ip_mismatch',
    ];

    private function __construct(
        /** True only when the token verified and this call consumed it. Never true for `dg_` or `co_` tokens. */
        public readonly bool $valid = false,
        /** The spec's caller rule: valid AND action === expected_action (just valid without expected_action). */
        public readonly bool $accepted = false,
        /** The scene bound into the token (`login`...); null when the token did not verify. */
        public readonly ?string $action = null,
        /** `ch_...`; null when the token did not verify. */
        public readonly ?string $challengeId = null,
        /** The uid bound through a server token's bind_uid, else null. */
        public readonly ?string $uid = null,
        public readonly ?CaptchaArgs $captchaArgs = null,
        /** A `dg_` token: the app's quota is exhausted and the widget skipped verification. Never valid. */
        public readonly bool $degraded = false,
        /** A `dg_` token whose 5 minutes have passed, or error_code token_expired. */
        public readonly bool $expired = false,
        /** `quota_exhausted` (degraded), `client_ip_mismatch` (the app's reject policy), `client_only` (a `co_` token), else null. */
        public readonly ?string $reason = null,
        /** An `offline_` token from the standby service. */
        public readonly bool $offline = false,
        /** A `co_` token, made in a browser that reached no Gatehouse service: never verifiable, never valid. */
        public readonly bool $clientOnly = false,
        /**
         * Why the token was refused: `token_already_used`, `token_expired`, `token_not_found`,
         * `token_action_mismatch` or `client_ip_mismatch`; else null.
         */
        public readonly ?string $errorCode = null,
        /** `match`, `mismatch` or `unverifiable` when client_ip was given and the token verified. */
        public readonly ?string $clientIpCheck = null,
        /** The API's request id for this validation; null when no request was made. */
        public readonly ?string $requestId = null,
    ) {
    }

    /** The spec's caller rule: accept only a valid token minted for the scene expected here. */
    public function accepts(string $expectedAction): bool
    {
        return $this->valid && $this->action === $expectedAction;
    }

    /**
     * @internal A token refused with one of TOKEN_ERRORS; $data is the envelope's data (the token's action,
     * the client IP check), empty from older servers.
     * @param array<string, mixed> $data
     */
    public static function refused(string $errorCode, bool $offline, ?string $requestId, array $data = []): self
    {
        $check = $data['client_ip_check'] ?? null;
        return new self(
            action: is_string($data['action'] ?? null) ? $data['action'] : null,
            expired: $errorCode === 'token_expired',
            reason: is_string($data['reason'] ?? null) ? $data['reason'] : null,
            offline: $offline,
            errorCode: $errorCode,
            clientIpCheck: in_array($check, ['match', 'mismatch', 'unverifiable'], true) ? $check : null,
            requestId: $requestId,
        );
    }

    /** @internal A `co_` token: nothing to ask, no service could verify it. */
    public static function clientOnly(): self
    {
        return new self(clientOnly: true, reason: 'client_only');
    }

    /**
     * @internal The verdict from `data` of a successful validation (the pt_/offline_ form or the dg_ form).
     * @param array<string, mixed> $data
     */
    public static function fromData(array $data, bool $offline, ?string $expectedAction, ?string $requestId): self
    {
        $text = static fn (mixed $v): ?string => is_string($v) ? $v : null;
        $degraded = ($data['degraded'] ?? null) === true;
        // Whatever an answer says, degraded tokens are never valid (spec; invariant 10 for co_).
        $valid = ($data['valid'] ?? null) === true && !$degraded;
        $action = $text($data['action'] ?? null);
        $uid = $data['uid'] ?? null;
        $check = $text($data['client_ip_check'] ?? null);
        return new self(
            valid: $valid,
            accepted: $expectedAction === null ? $valid : ($valid && $action === $expectedAction),
            action: $action,
            challengeId: $text($data['challenge_id'] ?? null),
            uid: $uid === null ? null : (is_scalar($uid) ? (string) $uid : json_encode($uid)),
            captchaArgs: CaptchaArgs::fromArray($data['captcha_args'] ?? null),
            degraded: $degraded,
            expired: ($data['expired'] ?? null) === true,
            reason: $text($data['reason'] ?? null),
            offline: $offline,
            clientIpCheck: in_array($check, ['match', 'mismatch', 'unverifiable'], true) ? $check : null,
            requestId: $requestId,
        );
    }

    /** The verdict as the API and the shared test vectors spell it (snake_case), for logs. */
    public function toArray(): array
    {
        return [
            'valid' => $this->valid,
            'accepted' => $this->accepted,
            'action' => $this->action,
            'challenge_id' => $this->challengeId,
            'uid' => $this->uid,
            'captcha_args' => $this->captchaArgs?->toArray(),
            'degraded' => $this->degraded,
            'expired' => $this->expired,
            'reason' => $this->reason,
            'offline' => $this->offline,
            'client_only' => $this->clientOnly,
            'error_code' => $this->errorCode,
            'client_ip_check' => $this->clientIpCheck,
            'request_id' => $this->requestId,
        ];
    }
}
