package gatehouse

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// discoveryServer answers GET /v1/standby with the given status and counts the calls.
type discoveryServer struct {
	*httptest.Server
	mu     sync.Mutex
	calls  int
	status int
	hosts  string
}

func newDiscoveryServer(t *testing.T) *discoveryServer {
	d := &discoveryServer{status: 200, hosts: `["https://fallbackapiv1-a.example", "https://fallbackapiv1-b.example/"]`}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		defer d.mu.Unlock()
		if r.URL.Path != "/v1/standby" || r.Method != "GET" {
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
		}
		d.calls++
		w.WriteHeader(d.status)
		fmt.Fprintf(w, `{"code":0,"data":{"bypass":[],"fallback":%s}}`, d.hosts)
	}))
	t.Cleanup(d.Close)
	return d
}

func (d *discoveryServer) set(status int, hosts string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.status, d.hosts = status, hosts
}

func (d *discoveryServer) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls
}

func TestDiscoveryIsCachedRefreshedAndSurvivesFailures(t *testing.T) {
	d := newDiscoveryServer(t)
	c, err := NewClient("ak_1", "sk_1", WithBaseURL(d.URL))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	c.standby.now = func() time.Time { return now }
	ctx := context.Background()
	want := []string{"https://fallbackapiv1-a.example", "https://fallbackapiv1-b.example"}

	// 1. First contact asks once; later calls use the cache.
	for i := 0; i < 3; i++ {
		if got := c.standby.get(ctx, false); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("hosts %v, want %v", got, want)
		}
	}
	if d.count() != 1 {
		t.Fatalf("%d discoveries, want 1", d.count())
	}
	// 2. After the TTL, an offline_ call does not wait for a refresh; a main-API call refreshes.
	now = now.Add(discoveryTTL)
	c.standby.get(ctx, true)
	if d.count() != 1 {
		t.Fatal("an offline_ call refreshed a known list")
	}
	d.set(500, `[]`)
	if got := c.standby.get(ctx, false); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("a failed refresh lost the hosts: %v", got)
	}
	// 3. A failure is not retried for discoveryRetry.
	c.standby.get(ctx, false)
	if d.count() != 2 {
		t.Fatalf("%d discoveries, want 2 (no retry within %s)", d.count(), discoveryRetry)
	}
	now = now.Add(discoveryRetry)
	d.set(200, `["https://fallbackapiv1-c.example", "not a url", 42]`)
	if got := c.standby.get(ctx, false); fmt.Sprint(got) != "[https://fallbackapiv1-c.example]" {
		t.Fatalf("refreshed hosts %v", got)
	}
	// 4. A 404 (an API without the endpoint) is an answer: no hosts.
	now = now.Add(discoveryTTL)
	d.set(404, `[]`)
	if got := c.standby.get(ctx, false); len(got) != 0 {
		t.Fatalf("after a 404: %v", got)
	}
	if d.count() != 4 {
		t.Fatalf("%d discoveries, want 4", d.count())
	}
}

func TestBackupServersOptionDisablesDiscovery(t *testing.T) {
	d := newDiscoveryServer(t)
	c, _ := NewClient("ak_1", "sk_1", WithBaseURL(d.URL), WithBackupServers("https://fallbackapiv1-x.example/"))
	if got := c.standby.get(context.Background(), true); fmt.Sprint(got) != "[https://fallbackapiv1-x.example]" {
		t.Fatalf("hosts %v", got)
	}
	if d.count() != 0 {
		t.Fatal("discovery with fixed backup servers")
	}
}

func TestConcurrentFirstCallsDiscoverOnce(t *testing.T) {
	d := newDiscoveryServer(t)
	c, _ := NewClient("ak_1", "sk_1", WithBaseURL(d.URL))
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.standby.get(context.Background(), false)
		}()
	}
	wg.Wait()
	if d.count() != 1 {
		t.Fatalf("%d discoveries, want 1", d.count())
	}
}

func TestDiscoveryIsPublicDeduplicatedAndBounded(t *testing.T) {
	var header http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header = r.Header.Clone()
		var list []string
		for i := 0; i < 12; i++ {
			list = append(list, fmt.Sprintf(`"https://fallbackapiv1-%d.example"`, i%10))
		}
		fmt.Fprintf(w, `{"code":0,"data":{"fallback":[%s]}}`, strings.Join(list, ","))
	}))
	defer srv.Close()
	c, _ := NewClient("ak_1", "sk_1", WithBaseURL(srv.URL))
	hosts := c.standby.get(context.Background(), false)
	if len(hosts) != maxBackupHosts || hosts[0] != "https://fallbackapiv1-0.example" {
		t.Errorf("hosts %v", hosts)
	}
	if header.Get("X-App-Secret") != "" || header.Get("X-App-Key") != "" {
		t.Error("the app's credentials were sent to the public discovery endpoint")
	}
}

func TestCallsDuringDiscoveryWaitForIt(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		fmt.Fprint(w, `{"code":0,"data":{"fallback":["https://fallbackapiv1-a.example"]}}`)
	}))
	defer srv.Close()
	c, _ := NewClient("ak_1", "sk_1", WithBaseURL(srv.URL))
	first := make(chan []string)
	go func() { first <- c.standby.get(context.Background(), false) }()
	for {
		c.standby.mu.Lock()
		started := c.standby.fetching != nil
		c.standby.mu.Unlock()
		if started {
			break
		}
		time.Sleep(time.Millisecond)
	}
	second := make(chan []string)
	go func() { second <- c.standby.get(context.Background(), true) }()
	close(release)
	for _, ch := range []chan []string{first, second} {
		if got := <-ch; len(got) != 1 {
			t.Errorf("hosts %v", got)
		}
	}
}
