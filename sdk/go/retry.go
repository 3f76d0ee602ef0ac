package gatehouse

import (
	"context"
	"time"
)

// Retries as data: what is retried, how long to wait, and the ceiling. Only outcomes where a second
// try can give a different answer are retried: no HTTP answer at all, or a 5xx other than
// service_online (which says the URL is wrong). A 4xx is an answer. Validation stays safe to retry
// because every attempt of one call carries the same idempotency key.

const (
	// backoffBase is the first wait; each retry doubles it, up to backoffCeiling (before jitter).
	backoffBase    = 200 * time.Millisecond
	backoffCeiling = 2 * time.Second
	// maxRetryAfter is the longest Retry-After a 429 is retried after; above it the error is returned at once.
	maxRetryAfter = 10 * time.Second
)

// outcome is what one attempt produced, as far as retrying is concerned.
type outcome struct {
	network       bool // no HTTP answer (refused, reset, timeout)
	status        int
	errCode       string // the envelope's error code, if any
	retryAfter    time.Duration
	hasRetryAfter bool
}

// failedOver reports whether the host failed in a way that sends the call to another host or a retry:
// no answer, or a 5xx (service_online included: a standby host saying the main API is up).
func (o outcome) failedOver() bool { return o.network || o.status >= 500 }

// retryDelay says how long to wait before retry number retry (0-based) of the same host, or false to
// stop and report the outcome. rateLimited enables retrying 429 after its Retry-After.
func retryDelay(o outcome, retry, maxRetries int, rateLimited bool, random func() float64) (time.Duration, bool) {
	if retry >= maxRetries {
		return 0, false
	}
	if o.network || (o.status >= 500 && o.errCode != CodeServiceOnline) {
		return backoff(retry, random), true
	}
	if o.status == 429 && rateLimited {
		after := time.Second
		if o.hasRetryAfter {
			after = o.retryAfter
		}
		if after > maxRetryAfter {
			return 0, false
		}
		// A little jitter on top, so instances throttled together do not come back in the same millisecond.
		return after + time.Duration(random()*float64(100*time.Millisecond)), true
	}
	return 0, false
}

// backoff is exponential with "equal jitter": half the step for sure, the other half random; capped.
func backoff(retry int, random func() float64) time.Duration {
	step := backoffBase << retry
	if step > backoffCeiling || step <= 0 {
		step = backoffCeiling
	}
	return step/2 + time.Duration(random()*float64(step/2))
}

// sleepContext waits d, or returns the context's error as soon as it is done.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
