package gatehouse

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// The shared vectors (sdk/test-vectors in the Gatehouse repository), run against fake hosts exactly as
// README.md there says. The module carries its copy in testdata/, so that its tests run wherever it is
// unpacked; in the repository the copy must equal the shared files.

func TestVectorsAreTheSharedOnes(t *testing.T) {
	for _, name := range []string{"validate.json", "issue.json"} {
		shared, err := os.ReadFile(filepath.Join("..", "test-vectors", name))
		if errors.Is(err, os.ErrNotExist) {
			t.Logf("outside the Gatehouse repository: testdata/%s is the module's own copy", name)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		copied, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if string(shared) != string(copied) {
			t.Errorf("testdata/%s differs from sdk/test-vectors/%s: copy it (cp sdk/test-vectors/%s sdk/go/testdata/)", name, name, name)
		}
	}
}

type vectorFile struct {
	Client vectorClient      `json:"client"`
	Cases  []json.RawMessage `json:"cases"`
}

type vectorClient struct {
	AppKey        string          `json:"app_key"`
	AppSecret     string          `json:"app_secret"`
	TimeoutMS     int             `json:"timeout_ms"`
	MaxRetries    *int            `json:"max_retries"`
	BackupServers json.RawMessage `json:"backup_servers"`
}

type vectorCase struct {
	Name    string                     `json:"name"`
	Client  vectorClient               `json:"client"`
	Answers map[string]json.RawMessage `json:"answers"`
	Request []expectedRequest          `json:"requests"`
	Error   *expectedError             `json:"error"`

	// validate.json
	Token   string `json:"token"`
	Options struct {
		ClientIP       string `json:"client_ip"`
		ExpectedAction string `json:"expected_action"`
		IdempotencyKey string `json:"idempotency_key"`
	} `json:"options"`
	Verdict map[string]any `json:"verdict"`

	// issue.json
	Params struct {
		Action          string `json:"action"`
		TTL             int    `json:"ttl"`
		MaxUses         int    `json:"max_uses"`
		BindIP          string `json:"bind_ip"`
		BindDeviceID    string `json:"bind_device_id"`
		BindFingerprint string `json:"bind_fingerprint"`
		BindUID         string `json:"bind_uid"`
	} `json:"params"`
	Result *struct {
		ServerToken string `json:"server_token"`
		ExpiresIn   int64  `json:"expires_in"`
		IssuedAt    int64  `json:"issued_at"`
	} `json:"result"`
}

type expectedRequest struct {
	Host           string            `json:"host"`
	Method         string            `json:"method"`
	Path           string            `json:"path"`
	IdempotencyKey any               `json:"idempotency_key"`
	Body           map[string]any    `json:"body"`
	ContentType    string            `json:"content_type"`
	Form           map[string]string `json:"form"`
	MinDelayMS     *int              `json:"min_delay_ms"`
}

type expectedError struct {
	Code              string  `json:"code"`
	Status            *int    `json:"status"`
	RequestID         *string `json:"request_id"`
	RetryAfterSeconds *int    `json:"retry_after_seconds"`
}

func loadVectors(t *testing.T, name string) (vectorClient, []vectorCase) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var file vectorFile
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	cases := make([]vectorCase, len(file.Cases))
	for i, rawCase := range file.Cases {
		if err := json.Unmarshal(rawCase, &cases[i]); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
	}
	if len(cases) == 0 {
		t.Fatalf("%s has no cases", name)
	}
	return file.Client, cases
}

// newVectorClient builds the client of a case: the file's client settings, the case's overrides.
func newVectorClient(t *testing.T, hosts *fakeHosts, base, override vectorClient) *Client {
	t.Helper()
	opts := []Option{WithBaseURL(hosts.url("main")), WithTimeout(time.Duration(base.TimeoutMS) * time.Millisecond)}
	retries := base.MaxRetries
	if override.MaxRetries != nil {
		retries = override.MaxRetries
	}
	opts = append(opts, WithMaxRetries(*retries))
	backup := base.BackupServers
	if override.BackupServers != nil {
		backup = override.BackupServers
	}
	var word string
	if json.Unmarshal(backup, &word) == nil {
		if word != "discover" {
			t.Fatalf("backup_servers: unknown %q", word)
		}
	} else {
		var names []string
		if err := json.Unmarshal(backup, &names); err != nil {
			t.Fatal(err)
		}
		urls := []string{}
		for _, name := range names {
			urls = append(urls, hosts.url(name))
		}
		opts = append(opts, WithBackupServers(urls...))
	}
	c, err := NewClient(base.AppKey, base.AppSecret, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestValidateVectors(t *testing.T) {
	base, cases := loadVectors(t, "validate.json")
	for _, vc := range cases {
		t.Run(vc.Name, func(t *testing.T) {
			t.Parallel()
			hosts := startFakeHosts(t, vc.Answers)
			client := newVectorClient(t, hosts, base, vc.Client)
			verdict, err := client.Validate(context.Background(), vc.Token, &ValidateParams{
				ClientIP:       vc.Options.ClientIP,
				ExpectedAction: vc.Options.ExpectedAction,
				IdempotencyKey: vc.Options.IdempotencyKey,
			})
			checkRequests(t, hosts, base, vc.Request, "application/json")
			if vc.Error != nil {
				checkError(t, err, vc.Error)
				return
			}
			if err != nil {
				t.Fatalf("error %v, want the verdict %v", err, vc.Verdict)
			}
			if got := verdictAsJSON(t, verdict); !reflect.DeepEqual(got, vc.Verdict) {
				t.Errorf("verdict\n got  %v\n want %v", got, vc.Verdict)
			}
		})
	}
}

func TestIssueVectors(t *testing.T) {
	base, cases := loadVectors(t, "issue.json")
	for _, vc := range cases {
		t.Run(vc.Name, func(t *testing.T) {
			t.Parallel()
			hosts := startFakeHosts(t, vc.Answers)
			client := newVectorClient(t, hosts, base, vc.Client)
			p := vc.Params
			token, err := client.IssueServerToken(context.Background(), &ServerTokenParams{
				Action: p.Action, TTL: time.Duration(p.TTL) * time.Second, MaxUses: p.MaxUses,
				BindIP: p.BindIP, BindDeviceID: p.BindDeviceID, BindFingerprint: p.BindFingerprint, BindUID: p.BindUID,
			})
			checkRequests(t, hosts, base, vc.Request, "application/x-www-form-urlencoded")
			if vc.Error != nil {
				checkError(t, err, vc.Error)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := ServerToken{Token: vc.Result.ServerToken, ExpiresIn: time.Duration(vc.Result.ExpiresIn) * time.Second, IssuedAt: time.Unix(vc.Result.IssuedAt, 0)}
			if *token != want {
				t.Errorf("server token %+v, want %+v", *token, want)
			}
		})
	}
}

// verdictAsJSON renders a verdict as the vectors write it: snake_case, null for absent.
func verdictAsJSON(t *testing.T, v *Verdict) map[string]any {
	orNull := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	m := map[string]any{
		"valid": v.Valid, "accepted": v.Accepted, "action": orNull(v.Action), "challenge_id": orNull(v.ChallengeID),
		"uid": orNull(v.UID), "captcha_args": nil, "degraded": v.Degraded, "expired": v.Expired,
		"reason": orNull(v.Reason), "offline": v.Offline, "client_only": v.ClientOnly,
		"error_code": orNull(v.ErrorCode), "client_ip_check": orNull(v.ClientIPCheck), "request_id": orNull(v.RequestID),
	}
	if a := v.CaptchaArgs; a != nil {
		m["captcha_args"] = map[string]any{
			"platform": a.Platform, "user_ip": a.UserIP, "referer": orNull(a.Referer), "pkg": orNull(a.Pkg),
			"solved_at": a.SolvedAt, "risk_score": a.RiskScore,
		}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func checkError(t *testing.T, err error, want *expectedError) {
	t.Helper()
	var gerr *Error
	if !errors.As(err, &gerr) {
		t.Fatalf("got %v, want a *Error %s", err, want.Code)
	}
	status, requestID := 0, ""
	if want.Status != nil {
		status = *want.Status
	}
	if want.RequestID != nil {
		requestID = *want.RequestID
	}
	if gerr.Code != want.Code || gerr.Status != status || gerr.RequestID != requestID {
		t.Errorf("error {%s %d %q}, want {%s %d %q}: %v", gerr.Code, gerr.Status, gerr.RequestID, want.Code, status, requestID, gerr)
	}
	if want.RetryAfterSeconds != nil && gerr.RetryAfter != time.Duration(*want.RetryAfterSeconds)*time.Second {
		t.Errorf("RetryAfter %s, want %ds", gerr.RetryAfter, *want.RetryAfterSeconds)
	}
}

func checkRequests(t *testing.T, hosts *fakeHosts, base vectorClient, want []expectedRequest, contentType string) {
	t.Helper()
	got := hosts.recorded()
	if len(got) != len(want) {
		for _, r := range got {
			t.Logf("request to %s: %s %s %s", r.host, r.method, r.path, r.body)
		}
		t.Fatalf("%d requests, want %d", len(got), len(want))
	}
	key := ""
	for i, w := range want {
		g := got[i]
		if g.host != w.Host {
			t.Errorf("request %d went to %s, want %s", i+1, g.host, w.Host)
			continue
		}
		if w.MinDelayMS != nil && i > 0 {
			if gap := g.at.Sub(got[i-1].at); gap < time.Duration(*w.MinDelayMS)*time.Millisecond {
				t.Errorf("request %d came %s after the previous one, want at least %dms", i+1, gap, *w.MinDelayMS)
			}
		}
		if !g.observed {
			continue
		}
		if g.method != w.Method || g.path != w.Path {
			t.Errorf("request %d: %s %s, want %s %s", i+1, g.method, g.path, w.Method, w.Path)
		}
		if g.method != "POST" {
			if g.header.Get("X-App-Secret") != "" {
				t.Errorf("request %d: the app secret was sent to %s %s", i+1, g.method, g.path)
			}
			continue
		}
		if g.header.Get("X-App-Key") != base.AppKey || g.header.Get("X-App-Secret") != base.AppSecret {
			t.Errorf("request %d: credentials headers missing or wrong", i+1)
		}
		if ct := g.header.Get("Content-Type"); ct != contentType {
			t.Errorf("request %d: Content-Type %q, want %q", i+1, ct, contentType)
		}
		if w.Form != nil {
			form, err := url.ParseQuery(string(g.body))
			if err != nil {
				t.Fatal(err)
			}
			flat := map[string]string{}
			for k, v := range form {
				flat[k] = v[0]
			}
			if !reflect.DeepEqual(flat, w.Form) {
				t.Errorf("request %d: form %v, want %v", i+1, flat, w.Form)
			}
			continue
		}
		var body map[string]any
		if err := json.Unmarshal(g.body, &body); err != nil {
			t.Fatalf("request %d: body %q is not JSON", i+1, g.body)
		}
		gotKey, present := body["idempotency_key"].(string)
		delete(body, "idempotency_key")
		if w.Body != nil && !reflect.DeepEqual(body, w.Body) {
			t.Errorf("request %d: body %v, want %v", i+1, body, w.Body)
		}
		switch wk := w.IdempotencyKey.(type) {
		case bool:
			if present != wk {
				t.Errorf("request %d: idempotency_key present %v, want %v", i+1, present, wk)
			}
		case string:
			if gotKey != wk {
				t.Errorf("request %d: idempotency_key %q, want %q", i+1, gotKey, wk)
			}
		}
		if present {
			if key != "" && gotKey != key {
				t.Errorf("request %d: idempotency_key %q differs from the call's first %q", i+1, gotKey, key)
			}
			key = gotKey
		}
	}
}
