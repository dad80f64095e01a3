package main

import (
	"context"
	"html"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/fixture"
)

// TestREADMEGoVersion: the Go release the README asks for is go.mod's.
func TestREADMEGoVersion(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go line")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "Go "+string(m[1])+" or later") {
		t.Errorf("README.md does not say \"Go %s or later\", go.mod's go line", m[1])
	}
	if got := regexp.MustCompile(`Go 1\.\d+(\.\d+)?`).FindAllString(string(readme), -1); len(got) != 1 {
		t.Errorf("README.md names Go releases %q; want go.mod's alone", got)
	}
}

// TestREADMETour runs every curl command of the README that asks
// localhost:8080, as written, against the example tree (only the address
// changes): each must succeed, and the revalidation must answer 304.
// Placeholders such as <hex> would fail here. (The Install section's
// downloads are TestREADMEInstall's.)
func TestREADMETour(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	skills, agents := exampleTree(t)
	// $ADMIN_TOKEN in a command is the server's admin_token.
	const admin = "readme-admin-token"
	ts := startServerEnv(t, map[string]string{"SKILLSERVER_ADMIN_TOKEN": admin}, "--skills", skills, "--agents", agents)
	host := strings.TrimPrefix(ts.URL, "http://")
	dir := t.TempDir()
	for _, line := range fixture.READMEShellLines(t, "../..", "curl ") {
		if !strings.Contains(line, "localhost:8080") {
			continue
		}
		if strings.Contains(line, "<") {
			t.Errorf("README command has a placeholder: %s", line)
			continue
		}
		cmdline := strings.ReplaceAll(line, "localhost:8080", host)
		// --fail turns a 4xx or 5xx into an exit status; a 304 is neither.
		cmdline = strings.ReplaceAll(cmdline, "curl -s", "curl --fail --show-error --max-time 10 -s")
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		cmd := exec.CommandContext(ctx, bash, "-o", "pipefail", "-c", cmdline)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "ADMIN_TOKEN="+admin)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s\n  %v: %s", line, err, out)
			continue
		}
		if strings.Contains(line, "# 304") && !strings.HasPrefix(string(out), "HTTP/1.1 304") {
			t.Errorf("%s\n  answered %.40q, want 304", line, out)
		}
	}
}

// TestREADMEDockerRunMounts: the README's podman run (of the image
// `make docker` builds with podman) mounts folders that exist from the
// repository root.
func TestREADMEDockerRunMounts(t *testing.T) {
	for _, line := range fixture.READMEShellLines(t, "../..", "podman run ") {
		mounts := regexp.MustCompile(`"\$PWD/([^:"]+):`).FindAllStringSubmatch(line, -1)
		if len(mounts) == 0 {
			t.Errorf("%s: mounts nothing from the repository", line)
		}
		for _, m := range mounts {
			if fi, err := os.Stat(filepath.Join("../..", m[1])); err != nil || !fi.IsDir() {
				t.Errorf("%s: %s is not a folder of the repository (%v)", line, m[1], err)
			}
		}
	}
}

// TestCIRunsTheREADMETestCommand: .ci/run must call exactly the test
// command README.md gives (the line of the "Two commands" block that says
// CI runs it), as its last command.
func TestCIRunsTheREADMETestCommand(t *testing.T) {
	var want string
	for _, line := range fixture.READMEShellLines(t, "../..", "make ") {
		if cmd, comment, ok := strings.Cut(line, "#"); ok && strings.Contains(comment, "CI runs this") {
			want = strings.TrimSpace(cmd)
		}
	}
	if want == "" {
		t.Fatal(`README.md names no command with "CI runs this"`)
	}
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for line := range strings.Lines(string(ci)) {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			last = l
		}
	}
	if last != want {
		t.Errorf(".ci/run ends with %q; README.md's test command is %q", last, want)
	}
}

// TestREADMEInstall: the Install section downloads the archive and the
// SHA256SUMS that `make dist` names and writes, unpacks the folder the
// archive holds, and `go install`s go.mod's module.
func TestREADMEInstall(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	// The Makefile's name=skillserver_$(VERSION)_$${os}_$$arch, the
	// README's skillserver_${V}_$P with P=OS_ARCH.
	if !strings.Contains(string(makefile), "name=skillserver_$(VERSION)_$${os}_$$arch;") {
		t.Fatal("the Makefile's dist no longer names archives skillserver_VERSION_OS_ARCH: update this test and the README's Install")
	}
	lines := strings.Join(fixture.READMEShellLines(t, "../..", ""), "\n")
	for _, want := range []string{
		"P=linux_amd64",
		"/releases/download/$V/skillserver_${V}_$P.tar.gz",
		"/releases/download/$V/SHA256SUMS",
		"sha256sum --ignore-missing -c SHA256SUMS",
		"tar -xzf skillserver_${V}_$P.tar.gz && cd skillserver_${V}_$P && ./skillserver version",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("README.md's Install has no %q", want)
		}
	}
	module := regexp.MustCompile(`(?m)^module (\S+)$`).FindSubmatch(mod)
	if module == nil {
		t.Fatal("go.mod names no module")
	}
	if want := "go install " + string(module[1]) + "/cmd/skillserver@latest"; !strings.Contains(lines, want) {
		t.Errorf("README.md does not say %q", want)
	}
}

// TestREADMEPageLines: the lines the README says a skill's page gives are
// the ones the page of k8s-deploy gives, with the example tree served at
// localhost:8080.
func TestREADMEPageLines(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)A skill's page gives lines to paste:\n\n```\n(.*?)```").FindSubmatch(b)
	if block == nil {
		t.Fatal("README.md has no block of the lines a skill's page gives")
	}
	skills, agents := exampleTree(t)
	ts := startServer(t, "--skills", skills, "--agents", agents)
	req, err := http.NewRequest(http.MethodGet, ts.URL+"/ui/skills/k8s-deploy", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /ui/skills/k8s-deploy: %v %v", resp.Status, err)
	}
	text := html.UnescapeString(string(page))
	for line := range strings.Lines(string(block[1])) {
		line, _, _ = strings.Cut(line, "   #")
		line = strings.ReplaceAll(strings.TrimSpace(line), "localhost:8080", strings.TrimPrefix(ts.URL, "http://"))
		if !strings.Contains(text, ">"+line+"<") {
			t.Errorf("the page of k8s-deploy gives no line %q", line)
		}
	}
}
