package gatehouse

import (
	"encoding/json"
	"fmt"
)

// CaptchaArgs is the context recorded when the challenge was solved (the spec's captcha_args), for
// logs and risk scoring.
type CaptchaArgs struct {
	// Platform is web, android, ios, flutter, windows...: open-ended.
	Platform string `json:"platform"`
	// UserIP is the end user's IP seen at solve time.
	UserIP string `json:"user_ip"`
	// Referer is the solve page URL on web; "" on native.
	Referer string `json:"referer"`
	// Pkg is the package or bundle id on native; "" on web.
	Pkg string `json:"pkg"`
	// SolvedAt is when the challenge was solved, in Unix seconds.
	SolvedAt int64 `json:"solved_at"`
	// RiskScore is the solve-time risk, 0 (safe) to 100 (risky).
	RiskScore int `json:"risk_score"`
}

// Verdict is the answer to Validate: a result, never an error, whatever the end user sent.
type Verdict struct {
	// Valid is true only when the token verified and this call consumed it. Never true for dg_ or co_ tokens.
	Valid bool `json:"valid"`
	// Accepted is the spec's caller rule: Valid and Action == ExpectedAction. Without an ExpectedAction it
	// is just Valid: pass one, or call Accepts.
	Accepted bool `json:"accepted"`
	// Action is the scene bound into the token (login...); "" when the token did not verify.
	Action string `json:"action"`
	// ChallengeID is ch_...; "" when the token did not verify.
	ChallengeID string `json:"challenge_id"`
	// UID is the uid bound through a server token's BindUID, else "".
	UID string `json:"uid"`
	// CaptchaArgs is nil when the token did not verify.
	CaptchaArgs *CaptchaArgs `json:"captcha_args"`
	// Degraded marks a dg_ token: the app's quota is exhausted and the widget skipped verification.
	Degraded bool `json:"degraded"`
	// Expired is set for a dg_ token whose 5 minutes have passed, and with ErrorCode token_expired.
	Expired bool `json:"expired"`
	// Reason is quota_exhausted (degraded), client_ip_mismatch (the app's reject policy), client_only
	// (a co_ token), else "".
	Reason string `json:"reason"`
	// Offline marks an offline_ token from the standby service.
	Offline bool `json:"offline"`
	// ClientOnly marks a co_ token, made in a browser that reached no Gatehouse service: never valid.
	ClientOnly bool `json:"client_only"`
	// ErrorCode says why the token was refused: token_already_used, token_expired, token_not_found,
	// token_action_mismatch or client_ip_mismatch; else "". The API answers these with HTTP 200 and the code
	// in data.error too; older servers used 404/409/410, read the same way.
	ErrorCode string `json:"error_code"`
	// ClientIPCheck is match, mismatch or unverifiable when ValidateParams.ClientIP was given and the token verified.
	ClientIPCheck string `json:"client_ip_check"`
	// RequestID is the API's request id for this validation; "" when no request was made.
	RequestID string `json:"request_id"`
}

// Accepts applies the spec's caller rule: the token is valid and was minted for expectedAction.
func (v *Verdict) Accepts(expectedAction string) bool {
	return v != nil && v.Valid && v.Action == expectedAction
}

// isTokenError reports the API error codes that are verdicts, not errors.
func isTokenError(code string) bool {
	switch code {
	case CodeTokenAlreadyUsed, CodeTokenExpired, CodeTokenNotFound, CodeTokenActionMismatch, CodeClientIPMismatch:
		return true
	}
	return false
}

// refusedVerdict is a token refused with one of the verdict codes; data is the envelope's data (the
// token's action, the client IP check), nil from older servers.
func refusedVerdict(code string, data map[string]any, offline bool, requestID string) *Verdict {
	v := &Verdict{ErrorCode: code, Expired: code == CodeTokenExpired, Offline: offline, RequestID: requestID}
	v.Action, _ = data["action"].(string)
	v.Reason, _ = data["reason"].(string)
	switch check, _ := data["client_ip_check"].(string); check {
	case "match", "mismatch", "unverifiable":
		v.ClientIPCheck = check
	}
	return v
}

func clientOnlyVerdict() *Verdict {
	return &Verdict{ClientOnly: true, Reason: "client_only"}
}

// verdictFromData reads data of a successful validation (the pt_/offline_ form or the dg_ form).
// Unexpected types read as absent, as the other SDKs do.
func verdictFromData(data map[string]any, offline bool, expectedAction, requestID string) *Verdict {
	v := &Verdict{
		Valid:         data["valid"] == true,
		Degraded:      data["degraded"] == true,
		Expired:       data["expired"] == true,
		Reason:        text(data["reason"]),
		Action:        text(data["action"]),
		ChallengeID:   text(data["challenge_id"]),
		UID:           uid(data["uid"]),
		CaptchaArgs:   captchaArgs(data["captcha_args"]),
		Offline:       offline,
		RequestID:     requestID,
		ClientIPCheck: text(data["client_ip_check"]),
	}
	switch v.ClientIPCheck {
	case "match", "mismatch", "unverifiable":
	default:
		v.ClientIPCheck = ""
	}
	// Whatever an answer says, degraded tokens are never valid (spec; invariant 10 for co_).
	if v.Degraded {
		v.Valid = false
	}
	if expectedAction == "" {
		v.Accepted = v.Valid
	} else {
		v.Accepted = v.Accepts(expectedAction)
	}
	return v
}

func text(v any) string {
	s, _ := v.(string)
	return s
}

func uid(v any) string {
	switch u := v.(type) {
	case nil:
		return ""
	case string:
		return u
	case json.Number:
		return u.String()
	default:
		return fmt.Sprint(u)
	}
}

func captchaArgs(v any) *CaptchaArgs {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	number := func(x any) int64 {
		n, _ := x.(json.Number)
		i, err := n.Int64()
		if err != nil {
			f, _ := n.Float64()
			return int64(f)
		}
		return i
	}
	return &CaptchaArgs{
		Platform:  text(m["platform"]),
		UserIP:    text(m["user_ip"]),
		Referer:   text(m["referer"]),
		Pkg:       text(m["pkg"]),
		SolvedAt:  number(m["solved_at"]),
		RiskScore: int(number(m["risk_score"])),
	}
}

// wholeNumber reads a JSON integer.
func wholeNumber(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}
