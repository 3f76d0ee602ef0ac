package gatehouse

import (
	"fmt"
	"strings"
	"time"
)

// Error codes the SDK itself produces, beside the API's own (invalid_app_key, rate_limit_exceeded...).
const (
	// CodeInvalidConfig: NewClient or a call was given a wrong option; nothing was sent.
	CodeInvalidConfig = "invalid_config"
	// CodeNetworkError: no HTTP answer after every retry (connection refused or reset, DNS failure).
	CodeNetworkError = "network_error"
	// CodeTimeout: no answer within the per-attempt timeout after every retry, or the caller's context deadline passed.
	CodeTimeout = "timeout"
	// CodeCanceled: the caller's context was canceled.
	CodeCanceled = "canceled"
	// CodeUnexpectedResponse: an answer that is not a Gatehouse envelope (a proxy's page, truncated JSON).
	CodeUnexpectedResponse = "unexpected_response"
)

// Error codes of the API that callers commonly branch on.
const (
	CodeInvalidAppKey     = "invalid_app_key"
	CodeInvalidAppSecret  = "invalid_app_secret"
	CodeAppDisabled       = "app_disabled"
	CodeInvalidRequest    = "invalid_request"
	CodeRateLimited       = "rate_limited"
	CodeRateLimitExceeded = "rate_limit_exceeded"
	CodeServiceOnline     = "service_online"
	CodeTokenAlreadyUsed  = "token_already_used"
	CodeTokenExpired      = "token_expired"
	CodeTokenNotFound     = "token_not_found"
	// CodeTokenActionMismatch: the token was solved for another action than the one the server was asked to expect.
	CodeTokenActionMismatch = "token_action_mismatch"
	// CodeClientIPMismatch: the app's client_ip_policy is reject and the client IP does not match the solve-time IP.
	CodeClientIPMismatch = "client_ip_mismatch"
)

// Error is the SDK's one error type: every error NewClient, Validate and IssueServerToken return is a
// *Error. A verdict is not an error: these are returned only when no verdict could be had (transport,
// authentication, configuration, the API refusing the request).
//
//	var gerr *gatehouse.Error
//	if errors.As(err, &gerr) && gerr.Code == gatehouse.CodeInvalidAppSecret { ... }
type Error struct {
	// Code is the API's error code (invalid_app_secret...) or one of the SDK's (CodeNetworkError...).
	Code string
	// Status is the HTTP status of the answer; 0 when there was no answer.
	Status int
	// RequestID is the API's X-Request-Id for the answer, for support and logs; "" without one.
	RequestID string
	// Message says what happened, in one sentence.
	Message string
	// RetryAfter is the API's Retry-After on a 429 answer, 0 otherwise.
	RetryAfter time.Duration
	// Err is the underlying cause (a net.Error, context.Canceled...), if any.
	Err error
	// Reverify is set by Validate only: Gatehouse could not be reached to check the token (no answer, or
	// a 502/503/504 other than service_online), so the token may well be good. Not a verdict on the
	// visitor: have the page verify again (Gatehouse.reverify in the widget), which fails over to a
	// standby host and yields an offline_ token this SDK validates there.
	Reverify bool
}

// Error renders the message with the code, status and request id.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("gatehouse: ")
	b.WriteString(e.Message)
	b.WriteString(" (")
	b.WriteString(e.Code)
	if e.Status != 0 {
		fmt.Fprintf(&b, ", HTTP %d", e.Status)
	}
	if e.RequestID != "" {
		b.WriteString(", request ")
		b.WriteString(e.RequestID)
	}
	b.WriteString(")")
	return b.String()
}

// Unwrap returns the cause, so errors.Is(err, context.DeadlineExceeded) works.
func (e *Error) Unwrap() error { return e.Err }

// IsAuthentication reports whether the app key or secret was refused (or the app is disabled):
// retrying cannot help, the configuration must change.
func (e *Error) IsAuthentication() bool {
	return e.Code == CodeInvalidAppKey || e.Code == CodeInvalidAppSecret || e.Code == CodeAppDisabled
}

func configError(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidConfig, Message: fmt.Sprintf(format, args...)}
}

// errorFromAnswer maps an answer that is not a success to the error to return: the one place statuses
// and envelopes become errors.
func errorFromAnswer(a *answer) *Error {
	e := &Error{Status: a.status, RequestID: a.requestID, RetryAfter: a.retryAfter}
	switch {
	case a.env == nil || a.env.code != -1:
		e.Code = CodeUnexpectedResponse
		e.Message = fmt.Sprintf("%s answered HTTP %d without a Gatehouse envelope: is the base URL the Gatehouse API?", a.url, a.status)
	case a.env.errCode == CodeServiceOnline:
		e.Code = CodeServiceOnline
		e.Message = fmt.Sprintf("%s [%s is a standby host: set WithBaseURL to the main API's base URL and leave failover to the SDK]", a.env.message, a.url)
	default:
		e.Code = a.env.errCode
		e.Message = a.env.message
	}
	return e
}
