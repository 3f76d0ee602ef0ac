package gatehouse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxBody bounds what is read of an answer: Gatehouse's are a few hundred bytes.
const maxBody = 1 << 20

// endpoint is one place a call can go: a base URL and the path on it.
type endpoint struct {
	base string
	path string
}

func (e endpoint) url() string { return e.base + e.path }

// request is one logical call, sent unchanged on every attempt.
type request struct {
	method      string
	contentType string // "" for GET
	body        []byte
	// retryRateLimited retries a 429 after its Retry-After (server-token issuance).
	retryRateLimited bool
	// public leaves the app's credentials out (GET /v1/standby needs none).
	public bool
}

// answer is an HTTP answer, with its envelope when the body was one.
type answer struct {
	url           string
	status        int
	requestID     string
	retryAfter    time.Duration
	hasRetryAfter bool
	env           *envelope
}

// envelope is the spec's {code: 0, data} or {code: -1, error, message}.
type envelope struct {
	code    int
	data    map[string]any
	errCode string
	message string
}

func (a *answer) outcome() outcome {
	o := outcome{status: a.status, retryAfter: a.retryAfter, hasRetryAfter: a.hasRetryAfter}
	if a.env != nil && a.env.code == -1 {
		o.errCode = a.env.errCode
	}
	return o
}

// send makes one logical call over a route: each host once, in order, moving on when it gives no
// answer or a 5xx; service_online from a host that is not the last jumps straight to the last (the main
// API, which that answer says is up). Only the last host is retried, with backoff, as retryDelay says.
// It returns the final answer (success or not), or a *Error when the last host gave no answer.
func (c *Client) send(ctx context.Context, route []endpoint, req request) (*answer, error) {
	var tried []string
	for i := 0; i < len(route); i++ {
		ep := route[i]
		last := i == len(route)-1
		for retry := 0; ; retry++ {
			a, failure := c.attempt(ctx, ep.url(), req)
			if err := callerDone(ctx); err != nil {
				return nil, err
			}
			var o outcome
			if failure != nil {
				o = outcome{network: true}
			} else {
				o = a.outcome()
			}
			if !last {
				if !o.failedOver() {
					return a, nil
				}
				tried = append(tried, ep.base)
				if o.errCode == CodeServiceOnline {
					i = len(route) - 2
				}
				break
			}
			delay, again := retryDelay(o, retry, c.maxRetries, req.retryRateLimited, c.random)
			if !again {
				if failure != nil {
					return nil, connectionError(ep.url(), failure, retry+1, tried)
				}
				return a, nil
			}
			if err := c.sleep(ctx, delay); err != nil {
				return nil, callerDone(ctx)
			}
		}
	}
	panic("gatehouse: send called with an empty route")
}

// attempt sends one HTTP request within the per-attempt timeout. A nil answer comes with the failure.
func (c *Client) attempt(ctx context.Context, rawURL string, req request) (*answer, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	httpReq, err := http.NewRequestWithContext(ctx, req.method, rawURL, body)
	if err != nil {
		return nil, err
	}
	if !req.public {
		httpReq.Header.Set("X-App-Key", c.appKey)
		httpReq.Header.Set("X-App-Secret", c.appSecret)
	}
	httpReq.Header.Set("Accept", "application/json")
	httpReq.Header.Set("User-Agent", c.userAgent)
	if req.contentType != "" {
		httpReq.Header.Set("Content-Type", req.contentType)
	}
	res, err := c.httpClient.Do(httpReq)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	// The body counts against the same timeout: a stalled body is a failed attempt.
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return nil, err
	}
	a := &answer{url: rawURL, status: res.StatusCode, requestID: res.Header.Get("X-Request-Id"), env: parseEnvelope(raw)}
	a.retryAfter, a.hasRetryAfter = parseRetryAfter(res.Header.Get("Retry-After"), time.Now())
	return a, nil
}

// parseEnvelope returns the envelope when raw is one; anything else (a proxy's page, truncated JSON) is nil.
func parseEnvelope(raw []byte) *envelope {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	if dec.More() {
		return nil
	}
	code, ok := v["code"].(json.Number)
	if !ok {
		return nil
	}
	switch code.String() {
	case "0":
		data, ok := v["data"].(map[string]any)
		if !ok {
			return nil
		}
		return &envelope{code: 0, data: data}
	case "-1":
		errCode, ok := v["error"].(string)
		if !ok || errCode == "" {
			return nil
		}
		message, _ := v["message"].(string)
		if message == "" {
			message = errCode
		}
		// A token verdict carries what is known of the token in data (its action, the client IP check).
		data, _ := v["data"].(map[string]any)
		return &envelope{code: -1, errCode: errCode, message: message, data: data}
	}
	return nil
}

// parseRetryAfter reads Retry-After as delta-seconds or an HTTP date.
func parseRetryAfter(header string, now time.Time) (time.Duration, bool) {
	header = strings.TrimSpace(header)
	if header == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(header); err == nil && n >= 0 && n <= 999999 {
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(header); err == nil {
		d := t.Sub(now).Round(time.Second)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

// callerDone turns the caller's finished context into the error to return, or nil while it runs.
func callerDone(ctx context.Context) error {
	switch err := ctx.Err(); {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeTimeout, Message: "the caller's context deadline passed before Gatehouse answered", Err: err}
	default:
		return &Error{Code: CodeCanceled, Message: "the caller's context was canceled before Gatehouse answered", Err: err}
	}
}

// connectionError is the error for a last host that gave no HTTP answer: timeout or network_error.
func connectionError(rawURL string, failure error, attempts int, tried []string) *Error {
	code := CodeNetworkError
	reason := failure.Error()
	var urlErr *url.Error
	if errors.As(failure, &urlErr) {
		reason = urlErr.Err.Error()
	}
	var netErr net.Error
	if errors.Is(failure, context.DeadlineExceeded) || (errors.As(failure, &netErr) && netErr.Timeout()) {
		code = CodeTimeout
		reason = "no answer within the per-attempt timeout"
	}
	tries := "1 attempt"
	if attempts > 1 {
		tries = fmt.Sprintf("%d attempts", attempts)
	}
	msg := fmt.Sprintf("could not reach Gatehouse at %s (%s): %s", rawURL, tries, reason)
	if len(tried) > 0 {
		msg += fmt.Sprintf("; the backup hosts %s failed before it", strings.Join(tried, ", "))
	}
	return &Error{Code: code, Message: msg, Err: failure}
}
