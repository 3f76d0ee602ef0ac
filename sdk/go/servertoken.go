package gatehouse

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// ServerTokenParams are the fields of POST /v1/server/challenge/issue. Only Action is required; the
// zero value of the others means "not sent" (the API's default).
type ServerTokenParams struct {
	// Action is the scene the challenge will be initialized for: the same action the widget uses.
	Action string
	// TTL is the token's lifetime, whole seconds from 1 s to 900 s (default 300 s).
	TTL time.Duration
	// MaxUses is how many challenge initializations may use the token, 1 to 1000 (default 10).
	MaxUses int
	// BindIP rejects initialization from another IP.
	BindIP string
	// BindDeviceID binds the token to a device id.
	BindDeviceID string
	// BindFingerprint binds the token to a browser fingerprint.
	BindFingerprint string
	// BindUID is echoed as Verdict.UID by validation of the pass token the challenge yields.
	BindUID string
}

// ServerToken is an issued server token: hand Token to the page, which gives it to the widget.
type ServerToken struct {
	// Token is sct_....
	Token string
	// ExpiresIn is the token's lifetime.
	ExpiresIn time.Duration
	// IssuedAt is when the API issued it.
	IssuedAt time.Time
}

// IssueServerToken issues a short-lived server token (POST /v1/server/challenge/issue, form-urlencoded
// as the spec shows), always on the main API. A 429 rate_limit_exceeded is retried after the API's
// Retry-After, within the client's max retries and when the wait is at most 10 s; network errors and
// 5xx are retried with backoff. Any other answer that is not a success is a *Error.
func (c *Client) IssueServerToken(ctx context.Context, params *ServerTokenParams) (*ServerToken, error) {
	if params == nil || params.Action == "" {
		return nil, configError("IssueServerToken needs ServerTokenParams.Action, the scene such as login.")
	}
	form := url.Values{"action": {params.Action}}
	if params.TTL != 0 {
		if params.TTL < time.Second || params.TTL%time.Second != 0 {
			return nil, configError("ServerTokenParams.TTL must be a whole number of seconds, at least 1 s; got %s.", params.TTL)
		}
		form.Set("ttl", strconv.FormatInt(int64(params.TTL/time.Second), 10))
	}
	if params.MaxUses != 0 {
		if params.MaxUses < 0 {
			return nil, configError("ServerTokenParams.MaxUses must be positive; got %d.", params.MaxUses)
		}
		form.Set("max_uses", strconv.Itoa(params.MaxUses))
	}
	for field, value := range map[string]string{
		"bind_ip": params.BindIP, "bind_device_id": params.BindDeviceID,
		"bind_fingerprint": params.BindFingerprint, "bind_uid": params.BindUID,
	} {
		if value != "" {
			form.Set(field, value)
		}
	}
	c.standby.get(ctx, false) // first contact: learn the backup hosts while the main API answers
	route := []endpoint{{base: c.baseURL, path: "/v1/server/challenge/issue"}}
	a, err := c.send(ctx, route, request{
		method:           "POST",
		contentType:      "application/x-www-form-urlencoded",
		body:             []byte(form.Encode()),
		retryRateLimited: true,
	})
	if err != nil {
		return nil, err
	}
	if a.env == nil || a.env.code != 0 || a.status >= 300 {
		return nil, errorFromAnswer(a)
	}
	token, ok1 := a.env.data["server_token"].(string)
	expiresIn, ok2 := wholeNumber(a.env.data["expires_in"])
	issuedAt, ok3 := wholeNumber(a.env.data["issued_at"])
	if !ok1 || !ok2 || !ok3 || token == "" {
		return nil, &Error{
			Code: CodeUnexpectedResponse, Status: a.status, RequestID: a.requestID,
			Message: fmt.Sprintf("%s answered without server_token, expires_in and issued_at", a.url),
		}
	}
	return &ServerToken{Token: token, ExpiresIn: time.Duration(expiresIn) * time.Second, IssuedAt: time.Unix(issuedAt, 0)}, nil
}
