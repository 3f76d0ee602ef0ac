package gatehouse

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestNewClientRefusesMisconfigurationInOneSentence(t *testing.T) {
	tests := []struct {
		name, key, secret string
		opts              []Option
		want              string
	}{
		{"missing key", "", "sk_1", nil, "appKey is required (the app's public key, ak_...)."},
		{"missing secret", "ak_1", "", nil, "appSecret is required (the app's secret, sk_...)."},
		{"swapped", "sk_1", "ak_1", nil, "appKey and appSecret are swapped: appKey is the public ak_... value, appSecret the sk_... one."},
		{"secret as key", "sk_1", "sk_2", nil, "appKey starts with sk_: that is a secret; appKey is the public ak_... key."},
		{"trailing newline", "ak_1", "sk_1\n", nil, "appSecret contains whitespace: a trailing newline from a file or an environment variable?"},
		{"base URL scheme", "ak_1", "sk_1", []Option{WithBaseURL("gatehouse.example.com")}, `WithBaseURL must be an http:// or https:// URL such as https://gatehouse.example.com; got "gatehouse.example.com".`},
		{"base URL query", "ak_1", "sk_1", []Option{WithBaseURL("https://g.example/?x=1")}, `WithBaseURL must not carry a query string or a fragment; got "https://g.example/?x=1".`},
		{"base URL credentials", "ak_1", "sk_1", []Option{WithBaseURL("https://u:p@g.example")}, "WithBaseURL must not carry credentials: the app key and secret are sent as headers."},
		{"standby as base URL", "ak_1", "sk_1", []Option{WithBaseURL("https://fallbackapiv1.g.example")}, "WithBaseURL points at a standby host (fallbackapiv1.g.example); set it to the main API's base URL. Standby hosts are not an alternative API: they answer service_online while the main API is up."},
		{"backup URL", "ak_1", "sk_1", []Option{WithBackupServers("ftp://x")}, `WithBackupServers must be an http:// or https:// URL such as https://gatehouse.example.com; got "ftp://x".`},
		{"backup is base", "ak_1", "sk_1", []Option{WithBaseURL("https://g.example/"), WithBackupServers("https://g.example")}, "WithBackupServers lists the base URL https://g.example: backup servers are the standby's fallbackapiv1. hosts."},
		{"timeout", "ak_1", "sk_1", []Option{WithTimeout(0)}, "WithTimeout must be above 0 and at most 10m0s; got 0s."},
		{"retries", "ak_1", "sk_1", []Option{WithMaxRetries(11)}, "WithMaxRetries must be from 0 to 10; got 11."},
		{"nil HTTP client", "ak_1", "sk_1", []Option{WithHTTPClient(nil)}, "WithHTTPClient needs a non-nil *http.Client."},
		{"nil option", "ak_1", "sk_1", []Option{nil}, "NewClient was given a nil Option."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewClient(tt.key, tt.secret, tt.opts...)
			var gerr *Error
			if c != nil || !errors.As(err, &gerr) {
				t.Fatalf("got %v, %v; want a *Error", c, err)
			}
			if gerr.Code != CodeInvalidConfig || gerr.Message != tt.want {
				t.Errorf("got %s %q\nwant %q", gerr.Code, gerr.Message, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "gatehouse: ") {
				t.Errorf("Error() = %q", err.Error())
			}
		})
	}
}

func TestNewClientDefaults(t *testing.T) {
	hc := &http.Client{}
	c, err := NewClient("ak_1", "sk_1", WithBaseURL("https://g.example/"), WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL() != "https://g.example" || c.timeout != 5*time.Second || c.maxRetries != 2 || c.httpClient != hc {
		t.Errorf("defaults: %s %s %d", c.BaseURL(), c.timeout, c.maxRetries)
	}
	if c.standby.fixed {
		t.Error("without WithBackupServers the hosts are discovered")
	}
	d, _ := NewClient("ak_1", "sk_1")
	if d.BaseURL() != DefaultBaseURL {
		t.Errorf("default base URL %s", d.BaseURL())
	}
}

func TestErrorRendering(t *testing.T) {
	e := &Error{Code: "invalid_app_secret", Status: 401, RequestID: "req_1", Message: "Invalid App Secret"}
	if got := e.Error(); got != "gatehouse: Invalid App Secret (invalid_app_secret, HTTP 401, request req_1)" {
		t.Errorf("Error() = %q", got)
	}
	if !e.IsAuthentication() {
		t.Error("invalid_app_secret is an authentication error")
	}
}
