package gatehouse

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Token prefixes, as the spec names them.
const (
	prefixOffline    = "offline_"
	prefixClientOnly = "co_"
	// maxTokenLength is the longest token the API accepts; longer input is refused without a request.
	maxTokenLength = 1024
)

var idempotencyKeyPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// ValidateParams are the optional parameters of Validate; nil means none.
type ValidateParams struct {
	// ClientIP is the end user's IP from your inbound request: enables the consistency check (ClientIPCheck).
	ClientIP string
	// ExpectedAction is the scene expected here (login): sets Verdict.Accepted by the spec's caller rule.
	ExpectedAction string
	// IdempotencyKey makes retries of one validation safe: a retry carrying the same key gets the same
	// verdict. Generated once per call when empty. If you set it, make it unique per logical validation
	// (your inbound request's id): presenting a token again with the same key gets the same verdict again.
	IdempotencyKey string
}

// Validate validates a pass token and consumes it. Whatever the end user sent, the answer is a
// verdict: replayed, expired, unknown or forged tokens give Valid false with ErrorCode. It returns a
// *Error only when no verdict could be had: bad credentials or request, network, 5xx after the retries.
//
// pt_ and dg_ tokens go to the main API (POST /v1/validate). offline_ tokens go to each backup API host
// once, in order (POST /api/validate), then to the main API, which accepts them too; service_online
// from a backup host sends the call to the main API at once. co_ tokens are client-only: never valid,
// and no request is made.
func (c *Client) Validate(ctx context.Context, token string, params *ValidateParams) (*Verdict, error) {
	var p ValidateParams
	if params != nil {
		p = *params
	}
	if p.IdempotencyKey != "" && !idempotencyKeyPattern.MatchString(p.IdempotencyKey) {
		return nil, configError("IdempotencyKey must be 1 to 128 characters of letters, digits, _ . : or -.")
	}
	// 1. Untrusted input: a missing or oversized token is an answer, not an error, and costs no request.
	if token == "" || len(token) > maxTokenLength {
		return refusedVerdict(CodeTokenNotFound, nil, false, ""), nil
	}
	// 2. Client-only tokens come from a browser that reached no Gatehouse service: never verifiable.
	if strings.HasPrefix(token, prefixClientOnly) {
		return clientOnlyVerdict(), nil
	}
	offline := strings.HasPrefix(token, prefixOffline)
	// 3. The route: offline_ tokens to the backup hosts first, everything else to the main API.
	// The first request of a client discovers the backup hosts, whatever the token.
	hosts := c.standby.get(ctx, offline)
	var route []endpoint
	if offline {
		for _, host := range hosts {
			route = append(route, endpoint{base: host, path: "/api/validate"})
		}
	}
	route = append(route, endpoint{base: c.baseURL, path: "/v1/validate"})
	// 4. One key for every attempt on every host, so a retry after a lost answer gets the same verdict.
	key := p.IdempotencyKey
	if key == "" {
		key = newIdempotencyKey()
	}
	body := map[string]string{"pass_token": token, "idempotency_key": key}
	if p.ClientIP != "" {
		body["client_ip"] = p.ClientIP
	}
	// The API checks the action too (token_action_mismatch); Accepted checks it here as well, for hosts
	// that do not (an older API, the standby's fallback). A string no token can carry as its action is
	// not sent: the API would refuse the request, and Accepted is false for it anyway.
	if actionPattern.MatchString(p.ExpectedAction) {
		body["action"] = p.ExpectedAction
	}
	raw, _ := json.Marshal(body)
	a, err := c.send(ctx, route, request{method: "POST", contentType: "application/json", body: raw})
	if err != nil {
		var gerr *Error
		if errors.As(err, &gerr) && (gerr.Code == CodeNetworkError || gerr.Code == CodeTimeout) && ctx.Err() == nil {
			gerr.Reverify = true
		}
		return nil, err
	}
	// 5. A success is a verdict; so are the token errors. Anything else is an error.
	if a.env != nil && a.env.code == 0 && a.status < 300 {
		return verdictFromData(a.env.data, offline, p.ExpectedAction, a.requestID), nil
	}
	if a.env != nil && a.env.code == -1 && isTokenError(a.env.errCode) {
		return refusedVerdict(a.env.errCode, a.env.data, offline, a.requestID), nil
	}
	e := errorFromAnswer(a)
	e.Reverify = (a.status == 502 || a.status == 503 || a.status == 504) && e.Code != CodeServiceOnline
	return nil, e
}

// actionPattern is what an action can be (the API's rule).
var actionPattern = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// newIdempotencyKey returns idem_ and a random UUID (version 4).
func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("idem_%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
