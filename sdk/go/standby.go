package gatehouse

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"
)

const (
	// discoveryTTL is how long a discovered list is used before it is fetched again (on a later call).
	discoveryTTL = 10 * time.Minute
	// discoveryRetry is how long after a failed discovery (no answer, 5xx) the next one may be tried.
	discoveryRetry = 30 * time.Second
	// maxBackupHosts bounds a published list: two hosts are deployed, a few more are tolerated.
	maxBackupHosts = 8
)

// standbyHosts knows the backup API hosts (the standby's fallbackapiv1. hosts) that validate offline_
// tokens: given with WithBackupServers, or discovered with GET /v1/standby on the client's first request
// to the main API, kept, and refreshed every discoveryTTL. Discovery happens while the main API is up,
// which is when it can answer: by the time an offline_ token arrives, the main API may be down.
type standbyHosts struct {
	client *Client
	fixed  bool
	now    func() time.Time

	mu        sync.Mutex
	hosts     []string
	known     bool // an answer was had (hosts is the main API's list, possibly empty)
	fetchedAt time.Time
	failedAt  time.Time
	fetching  chan struct{} // closed when the discovery under way ends; nil when none is
}

func newStandbyHosts(c *Client, hosts []string, fixed bool) *standbyHosts {
	return &standbyHosts{client: c, fixed: fixed, hosts: hosts, known: fixed, now: time.Now}
}

// get returns the backup hosts to try, discovering them first when due. For an offline_ token a list
// already known is used as is, never refreshed first: the main API is probably down, and asking it
// would cost a timeout before the backup hosts are tried. Calls made while a discovery is under way
// wait for it (or for their context), so the first offline_ tokens of a process are routed too.
func (s *standbyHosts) get(ctx context.Context, forOffline bool) []string {
	if s.fixed {
		return s.hosts
	}
	s.mu.Lock()
	if wait := s.fetching; wait != nil {
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.hosts
	}
	now := s.now()
	due := !s.known || now.Sub(s.fetchedAt) >= discoveryTTL
	if s.known && forOffline {
		due = false
	}
	if !s.failedAt.IsZero() && now.Sub(s.failedAt) < discoveryRetry {
		due = false
	}
	if !due {
		defer s.mu.Unlock()
		return s.hosts
	}
	done := make(chan struct{})
	s.fetching = done
	s.mu.Unlock()

	hosts, ok := s.client.discover(ctx)

	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetching = nil
	close(done)
	if ok {
		s.hosts, s.known, s.fetchedAt, s.failedAt = hosts, true, s.now(), time.Time{}
	} else {
		s.failedAt = s.now() // keep what was known: a failed refresh must not forget the hosts
	}
	return s.hosts
}

// discover asks GET /v1/standby once, without retries and without credentials (the list is public).
// An answer other than a success or a 404 (an API without the endpoint: no standby hosts) counts as no
// answer.
func (c *Client) discover(ctx context.Context) ([]string, bool) {
	a, failure := c.attempt(ctx, c.baseURL+"/v1/standby", request{method: http.MethodGet, public: true})
	if failure != nil {
		return nil, false
	}
	if a.status == http.StatusNotFound {
		return nil, true
	}
	if a.status != http.StatusOK || a.env == nil || a.env.code != 0 {
		return nil, false
	}
	list, _ := a.env.data["fallback"].([]any)
	hosts := make([]string, 0, len(list))
	for _, item := range list {
		raw, _ := item.(string)
		if u, err := checkURL(raw, "fallback"); err == nil && u != c.baseURL && !slices.Contains(hosts, u) && len(hosts) < maxBackupHosts {
			hosts = append(hosts, u)
		}
	}
	return hosts, true
}
