package gatehouse_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	gatehouse "github.com/gatehouse/gatehouse/sdk/go"
)

// Integration tests against a real main API, started by sdk/run-sdk-tests.sh, which exports
// GATEHOUSE_TEST_URL, GATEHOUSE_TEST_APP_KEY, GATEHOUSE_TEST_APP_SECRET (a test-mode app),
// GATEHOUSE_TEST_SOLVER (prints a fresh pass token: solver ACTION [SERVER_TOKEN]) and
// GATEHOUSE_TEST_FALLBACK_PORT (the fallback host the API publishes at GET /v1/standby).

type realAPI struct {
	url, key, secret, solver, fallbackPort string
}

func TestMain(m *testing.M) {
	if os.Getenv("GATEHOUSE_TEST_URL") == "" {
		fmt.Fprintln(os.Stderr, "\n!! SKIPPING the integration tests and docs examples: no real API (GATEHOUSE_TEST_URL is unset). Run bash sdk/run-sdk-tests.sh.")
	}
	os.Exit(m.Run())
}

// needAPI returns the real API, or skips (fails under CI=true, where nothing may be skipped).
func needAPI(t *testing.T) realAPI {
	t.Helper()
	api := realAPI{
		url: os.Getenv("GATEHOUSE_TEST_URL"), key: os.Getenv("GATEHOUSE_TEST_APP_KEY"),
		secret: os.Getenv("GATEHOUSE_TEST_APP_SECRET"), solver: os.Getenv("GATEHOUSE_TEST_SOLVER"),
		fallbackPort: os.Getenv("GATEHOUSE_TEST_FALLBACK_PORT"),
	}
	if api.url == "" || api.key == "" || api.secret == "" || api.solver == "" {
		msg := "no real API: run bash sdk/run-sdk-tests.sh (it starts one and sets GATEHOUSE_TEST_*)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "; CI=true: nothing may be skipped")
		}
		t.Skip(msg)
	}
	return api
}

// solve mints a real pass token through the challenge protocol (the headless solver).
func (api realAPI) solve(t *testing.T, action string, serverToken ...string) string {
	t.Helper()
	out, err := exec.Command(api.solver, append([]string{action}, serverToken...)...).Output()
	if err != nil {
		t.Fatalf("solver: %v", err)
	}
	token := strings.TrimSpace(string(out))
	if !strings.HasPrefix(token, "pt_") {
		t.Fatalf("solver printed %q", token)
	}
	return token
}

func (api realAPI) client(t *testing.T, opts ...gatehouse.Option) *gatehouse.Client {
	t.Helper()
	c, err := gatehouse.NewClient(api.key, api.secret, append([]gatehouse.Option{gatehouse.WithBaseURL(api.url)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRealAPIValidatesOnceThenTokenAlreadyUsed(t *testing.T) {
	api := needAPI(t)
	c := api.client(t)
	token := api.solve(t, "login")
	ctx := context.Background()

	first, err := c.Validate(ctx, token, &gatehouse.ValidateParams{ExpectedAction: "login", ClientIP: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Valid || !first.Accepted || first.Action != "login" || !strings.HasPrefix(first.ChallengeID, "ch_") ||
		first.CaptchaArgs == nil || first.CaptchaArgs.Platform != "web" || first.RequestID == "" || first.ClientIPCheck != "match" {
		t.Fatalf("first validation: %+v", first)
	}
	replay, err := c.Validate(ctx, token, &gatehouse.ValidateParams{ExpectedAction: "login"})
	if err != nil {
		t.Fatal(err)
	}
	if replay.Valid || replay.Accepted || replay.ErrorCode != gatehouse.CodeTokenAlreadyUsed {
		t.Fatalf("replay: %+v", replay)
	}
}

func TestRealAPIWrongActionIsNotAccepted(t *testing.T) {
	api := needAPI(t)
	v, err := api.client(t).Validate(context.Background(), api.solve(t, "register"), &gatehouse.ValidateParams{ExpectedAction: "login"})
	if err != nil {
		t.Fatal(err)
	}
	// The API checks the expected action: the token_action_mismatch verdict, naming the token's action.
	if v.Valid || v.Accepted || v.Action != "register" || v.ErrorCode != gatehouse.CodeTokenActionMismatch || v.Accepts("login") {
		t.Fatalf("verdict %+v", v)
	}
}

func TestRealAPIForgedAndClientOnlyTokens(t *testing.T) {
	api := needAPI(t)
	c := api.client(t)
	for token, want := range map[string]string{"pt_forged": gatehouse.CodeTokenNotFound, "dg_forged": gatehouse.CodeTokenNotFound} {
		v, err := c.Validate(context.Background(), token, nil)
		if err != nil || v.Valid || v.ErrorCode != want {
			t.Errorf("%s: %+v %v", token, v, err)
		}
	}
	v, err := c.Validate(context.Background(), "co_0123456789abcdef", nil)
	if err != nil || v.Valid || !v.ClientOnly {
		t.Errorf("co_: %+v %v", v, err)
	}
}

func TestRealAPIIssuesServerTokensThatBindAUID(t *testing.T) {
	api := needAPI(t)
	c := api.client(t)
	ctx := context.Background()
	st, err := c.IssueServerToken(ctx, &gatehouse.ServerTokenParams{Action: "login", TTL: 120 * time.Second, MaxUses: 1, BindUID: "user-42"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(st.Token, "sct_") || st.ExpiresIn != 120*time.Second || time.Since(st.IssuedAt) > time.Minute {
		t.Fatalf("server token %+v", st)
	}
	v, err := c.Validate(ctx, api.solve(t, "login", st.Token), &gatehouse.ValidateParams{ExpectedAction: "login"})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Accepted || v.UID != "user-42" {
		t.Fatalf("verdict %+v", v)
	}
	// A ttl above 900 is granted as 900, and ExpiresIn says so.
	clamped, err := c.IssueServerToken(ctx, &gatehouse.ServerTokenParams{Action: "login", TTL: 901 * time.Second})
	if err != nil || clamped.ExpiresIn != 900*time.Second {
		t.Fatalf("ttl 901: %+v %v", clamped, err)
	}
}

func TestRealAPIWrongCredentialsAreErrors(t *testing.T) {
	api := needAPI(t)
	for _, tt := range []struct{ key, secret, code string }{
		{api.key, "sk_not-the-secret", gatehouse.CodeInvalidAppSecret},
		{"ak_unknown", api.secret, gatehouse.CodeInvalidAppKey},
	} {
		c, err := gatehouse.NewClient(tt.key, tt.secret, gatehouse.WithBaseURL(api.url))
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Validate(context.Background(), "pt_anything", nil)
		var gerr *gatehouse.Error
		if !errors.As(err, &gerr) || gerr.Code != tt.code || gerr.Status != 401 || gerr.RequestID == "" || !gerr.IsAuthentication() {
			t.Errorf("got %v, want %s 401 with a request id", err, tt.code)
		}
	}
}

// fakeFallback plays the fallback host the real API publishes at GET /v1/standby.
type fakeFallback struct {
	mu       sync.Mutex
	requests []string
	answer   func(w http.ResponseWriter)
}

func startFakeFallback(t *testing.T, port string, answer func(w http.ResponseWriter)) *fakeFallback {
	t.Helper()
	if port == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("GATEHOUSE_TEST_FALLBACK_PORT is unset; CI=true: nothing may be skipped")
		}
		t.Skip("GATEHOUSE_TEST_FALLBACK_PORT is unset")
	}
	f := &fakeFallback{answer: answer}
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.Path+" "+string(body))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		f.answer(w)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return f
}

func TestRealAPIDiscoveryRoutesOfflineTokensToThePublishedFallbackHost(t *testing.T) {
	api := needAPI(t)
	fallback := startFakeFallback(t, api.fallbackPort, func(w http.ResponseWriter) {
		fmt.Fprint(w, `{"code":0,"data":{"valid":true,"challenge_id":"ch_off","action":"login","uid":null,"captcha_args":{"platform":"web","user_ip":"127.0.0.1","referer":null,"pkg":null,"solved_at":1,"risk_score":40},"offline":true}}`)
	})
	c := api.client(t) // no WithBackupServers: the hosts come from GET /v1/standby
	v, err := c.Validate(context.Background(), "offline_from.the.standby", &gatehouse.ValidateParams{ExpectedAction: "login"})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Accepted || !v.Offline {
		t.Fatalf("verdict %+v", v)
	}
	fallback.mu.Lock()
	defer fallback.mu.Unlock()
	if len(fallback.requests) != 1 || !strings.HasPrefix(fallback.requests[0], `POST /api/validate {"action":"login","idempotency_key":"idem_`) {
		t.Fatalf("fallback host got %q", fallback.requests)
	}
}

func TestRealAPIServiceOnlineFromTheFallbackHostSendsTheCallToMain(t *testing.T) {
	api := needAPI(t)
	fallback := startFakeFallback(t, api.fallbackPort, func(w http.ResponseWriter) {
		w.WriteHeader(503)
		fmt.Fprint(w, `{"code":-1,"error":"service_online","message":"The main API is online. Call the base URL instead of the standby service."}`)
	})
	v, err := api.client(t).Validate(context.Background(), "offline_forged.token", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The real main API accepts offline_ tokens too; a forged one is token_not_found there.
	if v.Valid || !v.Offline || v.ErrorCode != gatehouse.CodeTokenNotFound || v.RequestID == "" {
		t.Fatalf("verdict %+v", v)
	}
	if len(fallback.requests) != 1 {
		t.Fatalf("fallback host got %q", fallback.requests)
	}
}

// standbyMode sets the real standby's mode (auto, serve, online) as the operator would.
func standbyMode(t *testing.T, mode string) {
	t.Helper()
	token, err := os.ReadFile(os.Getenv("GATEHOUSE_TEST_STANDBY_TOKEN_FILE"))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", os.Getenv("GATEHOUSE_TEST_STANDBY_URL")+"/internal/v1/mode", strings.NewReader(`{"mode":"`+mode+`"}`))
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("standby mode %s: HTTP %d", mode, res.StatusCode)
	}
}

// TestRealStandby validates real offline_ tokens, minted on the standby's bypass host, through the real
// fallback host (discovered, after a published host that is down), then through the main API once the
// standby says service_online.
func TestRealStandby(t *testing.T) {
	api := needAPI(t)
	if os.Getenv("GATEHOUSE_TEST_STANDBY_URL") == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no real standby (GATEHOUSE_TEST_STANDBY_URL is unset); CI=true: nothing may be skipped")
		}
		t.Skip("no real standby: run bash sdk/run-sdk-tests.sh")
	}
	ctx := context.Background()
	standbyMode(t, "serve") // as during an outage of the main API
	t.Cleanup(func() { standbyMode(t, "auto") })
	solveOffline := func() string {
		out, err := exec.Command(api.solver, "--offline", "login").Output()
		token := strings.TrimSpace(string(out))
		if err != nil || !strings.HasPrefix(token, "offline_") {
			t.Fatalf("offline solver: %v %q", err, token)
		}
		return token
	}
	c := api.client(t) // the backup hosts come from GET /v1/standby: a host that is down, then the standby

	token := solveOffline()
	v, err := c.Validate(ctx, token, &gatehouse.ValidateParams{ExpectedAction: "login", ClientIP: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Valid || !v.Accepted || !v.Offline || v.Action != "login" || v.ChallengeID == "" || v.ClientIPCheck != "match" {
		t.Fatalf("offline_ on the standby: %+v", v)
	}
	replay, err := c.Validate(ctx, token, nil)
	if err != nil || replay.Valid || replay.ErrorCode != gatehouse.CodeTokenAlreadyUsed || !replay.Offline {
		t.Fatalf("replay on the standby: %+v %v", replay, err)
	}

	// The main API is back: the standby answers service_online and the SDK goes to the main API, which
	// validates offline_ tokens too.
	second := solveOffline()
	standbyMode(t, "online")
	v, err = c.Validate(ctx, second, &gatehouse.ValidateParams{ExpectedAction: "login"})
	if err != nil || !v.Accepted || !v.Offline {
		t.Fatalf("offline_ through the main API: %+v %v", v, err)
	}
	replay, err = c.Validate(ctx, second, nil)
	if err != nil || replay.ErrorCode != gatehouse.CodeTokenAlreadyUsed {
		t.Fatalf("replay through the main API: %+v %v", replay, err)
	}
	if os.Getenv("GATEHOUSE_TEST_SHARED_STORE") == "1" {
		// Consumed on the standby before the recovery: the main API honours it.
		again, err := c.Validate(ctx, token, nil)
		if err != nil || again.ErrorCode != gatehouse.CodeTokenAlreadyUsed {
			t.Fatalf("a token consumed on the standby, through the main API: %+v %v", again, err)
		}
	}
}
