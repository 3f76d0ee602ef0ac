package gatehouse

import (
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultBaseURL is where `npm start` serves the main API.
const DefaultBaseURL = "http://127.0.0.1:8080"

const (
	defaultTimeout    = 5 * time.Second
	defaultMaxRetries = 2
	maxMaxRetries     = 10
	maxTimeout        = 10 * time.Minute
)

// Standby hosts begin with these labels (spec): they are not an alternative API.
var standbyLabels = []string{"bypass.", "fallbackapiv1."}

// Option configures a Client; pass them to NewClient.
type Option func(*settings)

type settings struct {
	baseURL     string
	backup      []string
	backupFixed bool
	httpClient  *http.Client
	timeout     time.Duration
	maxRetries  int
	problems    []*Error
}

// WithBaseURL sets the main API's base URL (default DefaultBaseURL). A standby host
// (bypass.*, fallbackapiv1.*) is refused: failover is the SDK's job.
func WithBaseURL(baseURL string) Option {
	return func(s *settings) { s.baseURL = baseURL }
}

// WithBackupServers fixes the backup API hosts that validate offline_ tokens, in the order they are
// tried, instead of discovering them with GET /v1/standby. With no argument, offline_ tokens go to the
// main API only.
func WithBackupServers(urls ...string) Option {
	return func(s *settings) {
		s.backup = append([]string(nil), urls...)
		s.backupFixed = true
	}
}

// WithHTTPClient sets the *http.Client used for every request (proxies, instrumentation, tests).
// Its own Timeout, if any, still applies; the SDK's per-attempt timeout is WithTimeout.
func WithHTTPClient(c *http.Client) Option {
	return func(s *settings) {
		if c == nil {
			s.problems = append(s.problems, configError("WithHTTPClient needs a non-nil *http.Client."))
			return
		}
		s.httpClient = c
	}
}

// WithTimeout sets the time allowed for one attempt, answer body included (default 5 s).
func WithTimeout(d time.Duration) Option {
	return func(s *settings) {
		if d <= 0 || d > maxTimeout {
			s.problems = append(s.problems, configError("WithTimeout must be above 0 and at most %s; got %s.", maxTimeout, d))
			return
		}
		s.timeout = d
	}
}

// WithMaxRetries sets how many times a network error, a timeout or a 5xx is retried (default 2, at most 10).
func WithMaxRetries(n int) Option {
	return func(s *settings) {
		if n < 0 || n > maxMaxRetries {
			s.problems = append(s.problems, configError("WithMaxRetries must be from 0 to %d; got %d.", maxMaxRetries, n))
			return
		}
		s.maxRetries = n
	}
}

// checkCredential refuses what cannot be a credential, in one sentence naming the mistake.
func checkCredential(value, name, what string) *Error {
	switch {
	case value == "":
		return configError("%s is required (%s).", name, what)
	case strings.ContainsAny(value, " \t\r\n"):
		return configError("%s contains whitespace: a trailing newline from a file or an environment variable?", name)
	case len(value) > 256:
		return configError("%s is %d characters long; Gatehouse credentials are under 100.", name, len(value))
	}
	return nil
}

func checkCredentials(appKey, appSecret string) *Error {
	if err := checkCredential(appKey, "appKey", "the app's public key, ak_..."); err != nil {
		return err
	}
	if err := checkCredential(appSecret, "appSecret", "the app's secret, sk_..."); err != nil {
		return err
	}
	if strings.HasPrefix(appKey, "sk_") && strings.HasPrefix(appSecret, "ak_") {
		return configError("appKey and appSecret are swapped: appKey is the public ak_... value, appSecret the sk_... one.")
	}
	if strings.HasPrefix(appKey, "sk_") {
		return configError("appKey starts with sk_: that is a secret; appKey is the public ak_... key.")
	}
	return nil
}

// checkURL parses an http(s) base URL and returns it without a trailing slash.
func checkURL(raw, name string) (string, *Error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", configError("%s must be an http:// or https:// URL such as https://gatehouse.example.com; got %q.", name, raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || strings.Contains(raw, "#") || strings.Contains(raw, "?") {
		return "", configError("%s must not carry a query string or a fragment; got %q.", name, raw)
	}
	if u.User != nil {
		return "", configError("%s must not carry credentials: the app key and secret are sent as headers.", name)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

func checkBaseURL(raw string) (string, *Error) {
	base, err := checkURL(raw, "WithBaseURL")
	if err != nil {
		return "", err
	}
	u, _ := url.Parse(base)
	for _, label := range standbyLabels {
		if strings.HasPrefix(u.Hostname(), label) {
			return "", configError("WithBaseURL points at a standby host (%s); set it to the main API's base URL. "+
				"Standby hosts are not an alternative API: they answer service_online while the main API is up.", u.Hostname())
		}
	}
	return base, nil
}
