package gatehouse

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// hostNames are the fake hosts of the shared vectors (sdk/test-vectors/README.md).
var hostNames = []string{"main", "fallback1", "fallback2"}

// record is one request a fake host received. observed is false for an "unreachable" host, which
// closes connections unread: only the host is known.
type record struct {
	host     string
	observed bool
	method   string
	path     string
	header   http.Header
	body     []byte
	at       time.Time
}

// canned is one scripted answer: an HTTP answer, "drop" or "timeout".
type canned struct {
	kind    string
	status  int
	headers map[string]string
	body    []byte
}

// fakeHosts serves the answers of one vector case on main, fallback1 and fallback2 and records the
// requests in arrival order across hosts.
type fakeHosts struct {
	t       *testing.T
	urls    map[string]string
	mu      sync.Mutex
	records []record
	stop    chan struct{}
}

func startFakeHosts(t *testing.T, answers map[string]json.RawMessage) *fakeHosts {
	t.Helper()
	f := &fakeHosts{t: t, urls: map[string]string{}, stop: make(chan struct{})}
	scripts := map[string][]canned{}
	unreachable := map[string]bool{}
	for host, raw := range answers {
		var word string
		if json.Unmarshal(raw, &word) == nil {
			if word != "unreachable" {
				t.Fatalf("answers.%s: unknown host-level answer %q", host, word)
			}
			unreachable[host] = true
			continue
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			t.Fatalf("answers.%s: %v", host, err)
		}
		for _, item := range items {
			scripts[host] = append(scripts[host], parseCanned(t, item))
		}
	}
	for _, host := range hostNames {
		if unreachable[host] {
			f.urls[host] = f.startUnreachable(host)
			continue
		}
		server := httptest.NewServer(f.handler(host, scripts[host]))
		f.urls[host] = server.URL
		t.Cleanup(func() {
			server.CloseClientConnections()
			server.Close()
		})
	}
	t.Cleanup(func() { close(f.stop) })
	return f
}

func parseCanned(t *testing.T, raw json.RawMessage) canned {
	var word string
	if json.Unmarshal(raw, &word) == nil {
		if word != "drop" && word != "timeout" {
			t.Fatalf("unknown answer %q", word)
		}
		return canned{kind: word}
	}
	var a struct {
		Status  int               `json:"status"`
		Headers map[string]string `json:"headers"`
		Body    json.RawMessage   `json:"body"`
		Raw     *string           `json:"raw"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("answer %s: %v", raw, err)
	}
	c := canned{kind: "answer", status: a.Status, headers: a.Headers, body: a.Body}
	if a.Raw != nil {
		c.body = []byte(*a.Raw)
	} else if c.headers["Content-Type"] == "" {
		if c.headers == nil {
			c.headers = map[string]string{}
		}
		c.headers["Content-Type"] = "application/json"
	}
	return c
}

// startUnreachable listens, and closes every connection at once, unread.
func (f *fakeHosts) startUnreachable(host string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			f.add(record{host: host, at: time.Now()})
			if tcp, ok := conn.(*net.TCPConn); ok {
				_ = tcp.SetLinger(0) // a reset, as a refused or crashed host gives
			}
			conn.Close()
		}
	}()
	return "http://" + ln.Addr().String()
}

func (f *fakeHosts) add(r record) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.records = append(f.records, r)
}

func (f *fakeHosts) handler(host string, script []canned) http.Handler {
	var mu sync.Mutex
	next := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.add(record{host: host, observed: true, method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body, at: time.Now()})
		mu.Lock()
		n := next
		next++
		mu.Unlock()
		if n >= len(script) {
			f.t.Errorf("unexpected request #%d to %s: %s %s %s", n+1, host, r.Method, r.URL.Path, body)
			w.WriteHeader(599)
			return
		}
		a := script[n]
		switch a.kind {
		case "drop":
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		case "timeout":
			select {
			case <-r.Context().Done():
			case <-f.stop:
			}
		default:
			for k, v := range a.headers {
				w.Header().Set(k, v)
			}
			w.WriteHeader(a.status)
			out := a.body
			for _, name := range hostNames {
				out = bytes.ReplaceAll(out, []byte("{"+name+"}"), []byte(f.urls[name]))
			}
			_, _ = w.Write(out)
		}
	})
}

func (f *fakeHosts) recorded() []record {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]record(nil), f.records...)
}

// url maps a vector host name to the fake host's base URL.
func (f *fakeHosts) url(name string) string {
	u, ok := f.urls[name]
	if !ok || strings.TrimSpace(name) == "" {
		f.t.Fatalf("unknown host %q", name)
	}
	return u
}
