package gatehouse

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestBackoffIsExponentialWithEqualJitterAndCapped(t *testing.T) {
	tests := []struct {
		retry    int
		low, top time.Duration
	}{
		{0, 100 * time.Millisecond, 200 * time.Millisecond},
		{1, 200 * time.Millisecond, 400 * time.Millisecond},
		{2, 400 * time.Millisecond, 800 * time.Millisecond},
		{4, time.Second, 2 * time.Second},
		{40, time.Second, 2 * time.Second},
	}
	for _, tt := range tests {
		if got := backoff(tt.retry, func() float64 { return 0 }); got != tt.low {
			t.Errorf("retry %d, no jitter: %s, want %s", tt.retry, got, tt.low)
		}
		if got := backoff(tt.retry, func() float64 { return 0.999999 }); got > tt.top || got < tt.low {
			t.Errorf("retry %d, full jitter: %s, want at most %s", tt.retry, got, tt.top)
		}
	}
}

func TestRetryDelayDecidesWhatIsRetried(t *testing.T) {
	none := func() float64 { return 0 }
	tests := []struct {
		name        string
		o           outcome
		retry       int
		rateLimited bool
		want        time.Duration
		again       bool
	}{
		{"network", outcome{network: true}, 0, false, 100 * time.Millisecond, true},
		{"500", outcome{status: 500}, 1, false, 200 * time.Millisecond, true},
		{"budget spent", outcome{status: 500}, 2, false, 0, false},
		{"service_online", outcome{status: 503, errCode: CodeServiceOnline}, 0, false, 0, false},
		{"409 verdict", outcome{status: 409}, 0, false, 0, false},
		{"429 on validate", outcome{status: 429, retryAfter: time.Second, hasRetryAfter: true}, 0, false, 0, false},
		{"429 issue Retry-After 3", outcome{status: 429, retryAfter: 3 * time.Second, hasRetryAfter: true}, 0, true, 3 * time.Second, true},
		{"429 issue without Retry-After", outcome{status: 429}, 0, true, time.Second, true},
		{"429 issue Retry-After 60", outcome{status: 429, retryAfter: time.Minute, hasRetryAfter: true}, 0, true, 0, false},
	}
	for _, tt := range tests {
		got, again := retryDelay(tt.o, tt.retry, 2, tt.rateLimited, none)
		if got != tt.want || again != tt.again {
			t.Errorf("%s: %s %v, want %s %v", tt.name, got, again, tt.want, tt.again)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"", 0, false},
		{"7", 7 * time.Second, true},
		{" 0 ", 0, true},
		{"Sat, 21 Nov 2026 12:00:05 GMT", 5 * time.Second, true},
		{"Sat, 21 Nov 2026 11:00:00 GMT", 0, true},
		{"soon", 0, false},
		{"-1", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.header, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%q: %s %v, want %s %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCallerContextStopsRetries(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.WriteHeader(500)
	}))
	defer srv.Close()
	c, err := NewClient("ak_1", "sk_1", WithBaseURL(srv.URL), WithBackupServers())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.sleep = func(ctx context.Context, d time.Duration) error {
		cancel() // the caller gives up during the first backoff
		return sleepContext(ctx, d)
	}
	_, err = c.Validate(ctx, "pt_x", nil)
	var gerr *Error
	if !errors.As(err, &gerr) || gerr.Code != CodeCanceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want canceled wrapping context.Canceled", err)
	}
	if calls != 1 {
		t.Errorf("%d requests after cancel, want 1", calls)
	}
}

func TestCallerDeadlineIsATimeout(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer srv.Close()
	defer close(stop)
	c, _ := NewClient("ak_1", "sk_1", WithBaseURL(srv.URL), WithBackupServers())
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Validate(ctx, "pt_x", nil)
	var gerr *Error
	if !errors.As(err, &gerr) || gerr.Code != CodeTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want timeout wrapping context.DeadlineExceeded", err)
	}
}

func TestIdempotencyKeyShapeAndCallerKeyChecked(t *testing.T) {
	key := newIdempotencyKey()
	if !idempotencyKeyPattern.MatchString(key) || len(key) != len("idem_")+36 {
		t.Errorf("generated key %q", key)
	}
	if newIdempotencyKey() == key {
		t.Error("two calls, one key")
	}
	c, _ := NewClient("ak_1", "sk_1", WithBaseURL("http://127.0.0.1:9"), WithBackupServers())
	_, err := c.Validate(context.Background(), "pt_x", &ValidateParams{IdempotencyKey: "has spaces"})
	var gerr *Error
	if !errors.As(err, &gerr) || gerr.Code != CodeInvalidConfig {
		t.Fatalf("got %v", err)
	}
}
