package gatehouse

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"
)

// Version is the SDK version sent in the User-Agent header.
const Version = "0.1.0"

// Client talks to one Gatehouse app. Construct it once with NewClient and share it: it is safe for
// concurrent use, and it keeps the standby hosts it discovered.
type Client struct {
	appKey     string
	appSecret  string
	baseURL    string
	httpClient *http.Client
	timeout    time.Duration
	maxRetries int
	standby    *standbyHosts
	userAgent  string

	// Test seams: how to wait between attempts, and the jitter source.
	sleep  func(ctx context.Context, d time.Duration) error
	random func() float64
}

// NewClient checks the configuration once and returns a client, or a *Error (CodeInvalidConfig) whose
// message names the first mistake in one sentence.
func NewClient(appKey, appSecret string, opts ...Option) (*Client, error) {
	s := settings{baseURL: DefaultBaseURL, timeout: defaultTimeout, maxRetries: defaultMaxRetries}
	for _, opt := range opts {
		if opt == nil {
			return nil, configError("NewClient was given a nil Option.")
		}
		opt(&s)
	}
	if len(s.problems) > 0 {
		return nil, s.problems[0]
	}
	if err := checkCredentials(appKey, appSecret); err != nil {
		return nil, err
	}
	base, err := checkBaseURL(s.baseURL)
	if err != nil {
		return nil, err
	}
	backup := make([]string, 0, len(s.backup))
	for _, raw := range s.backup {
		u, err := checkURL(raw, "WithBackupServers")
		if err != nil {
			return nil, err
		}
		if u == base {
			return nil, configError("WithBackupServers lists the base URL %s: backup servers are the standby's fallbackapiv1. hosts.", u)
		}
		backup = append(backup, u)
	}
	httpClient := s.httpClient
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	c := &Client{
		appKey:     appKey,
		appSecret:  appSecret,
		baseURL:    base,
		httpClient: httpClient,
		timeout:    s.timeout,
		maxRetries: s.maxRetries,
		userAgent:  "gatehouse-go/" + Version,
		sleep:      sleepContext,
		random:     rand.Float64,
	}
	c.standby = newStandbyHosts(c, backup, s.backupFixed)
	return c, nil
}

// BaseURL is the main API's base URL this client talks to.
func (c *Client) BaseURL() string { return c.baseURL }
