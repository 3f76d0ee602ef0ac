package gatehouse

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A token Validate cannot check because Gatehouse is out of reach says Reverify; others do not.
func TestValidateUnreachableSaysReverify(t *testing.T) {
	check := func(t *testing.T, baseURL string, want bool) {
		t.Helper()
		c, err := NewClient("ak_1", "sk_1", WithBaseURL(baseURL), WithMaxRetries(0), WithBackupServers())
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Validate(context.Background(), "pt_x", nil)
		var gerr *Error
		if !errors.As(err, &gerr) {
			t.Fatalf("got %v; want a *Error", err)
		}
		if gerr.Reverify != want {
			t.Fatalf("Reverify = %v for %v; want %v", gerr.Reverify, gerr, want)
		}
	}
	answering := func(status int, code string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"code":-1,"error":"` + code + `","message":"m"}`))
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	_ = ln.Close()

	t.Run("no answer", func(t *testing.T) { check(t, closed, true) })
	for _, status := range []int{502, 503, 504} {
		t.Run(http.StatusText(status), func(t *testing.T) { check(t, answering(status, "service_unavailable"), true) })
	}
	t.Run("service_online", func(t *testing.T) { check(t, answering(503, "service_online"), false) })
	t.Run("500", func(t *testing.T) { check(t, answering(500, "internal_error"), false) })
	t.Run("401", func(t *testing.T) { check(t, answering(401, "invalid_app_secret"), false) })
}
