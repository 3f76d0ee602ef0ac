package gatehouse_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// README.md (the module's guide) is executable: every block after `<!-- example: NAME [token=ACTION] -->` is a program,
// built against this module and run against the real API with PASS_TOKEN solved for ACTION; each
// `// prints: X` comment must be exactly the matching line the program prints.

var exampleBlock = regexp.MustCompile("<!-- example: ([\\w-]+)(?: token=(\\w+))? -->\n```go\n([\\s\\S]*?)```")

type docExample struct{ name, tokenAction, code string }

func docExamples(t *testing.T) []docExample {
	t.Helper()
	doc, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []docExample
	for _, m := range exampleBlock.FindAllStringSubmatch(string(doc), -1) {
		out = append(out, docExample{name: m[1], tokenAction: m[2], code: m[3]})
	}
	return out
}

// buildExamples writes every example as a command of one module that requires this SDK through a
// replace directive (no network), and builds them all at once.
func buildExamples(t *testing.T, examples []docExample) string {
	t.Helper()
	sdk, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goMod := "module example.com/docs\n\ngo 1.22\n\nrequire github.com/gatehouse/gatehouse/sdk/go v0.0.0\n\n" +
		"replace github.com/gatehouse/gatehouse/sdk/go => " + sdk + "\n"
	write := func(name, content string) {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", goMod)
	for _, ex := range examples {
		write(filepath.Join(ex.name, "main.go"), ex.code)
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "bin")+string(filepath.Separator), "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the docs examples do not build:\n%s", out)
	}
	return filepath.Join(dir, "bin")
}

func TestDocsExamples(t *testing.T) {
	examples := docExamples(t)
	var names []string
	for _, ex := range examples {
		names = append(names, ex.name)
	}
	if got := strings.Join(names, " "); got != "handler verdict wrong-action errors server-token" {
		t.Fatalf("README.md has the examples %q", got)
	}
	bin := buildExamples(t, examples) // built even without an API: the examples always compile
	api := needAPI(t)
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(bin, ex.name))
			cmd.Env = append(os.Environ(), "GATEHOUSE_URL="+api.url, "GATEHOUSE_APP_KEY="+api.key, "GATEHOUSE_APP_SECRET="+api.secret)
			if ex.tokenAction != "" {
				cmd.Env = append(cmd.Env, "PASS_TOKEN="+api.solve(t, ex.tokenAction))
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || stderr.Len() > 0 {
				t.Fatalf("%v\nstderr: %s", err, stderr.String())
			}
			var want []string
			for _, m := range regexp.MustCompile(`// prints: (.*)`).FindAllStringSubmatch(ex.code, -1) {
				want = append(want, strings.TrimSpace(m[1]))
			}
			if len(want) == 0 {
				t.Fatal("an example without // prints:")
			}
			got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
