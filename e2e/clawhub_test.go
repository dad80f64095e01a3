//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/page"
)

// The ClawHub read API (docs/http-api.md, "ClawHub read API") driven by
// the real clawhub npm CLI, pinned, on Node 22 (it needs >= 22).
//
// What clawhub@0.23.3 does that these tests rely on (read from its dist/
// and observed here):
//   - --site is discovered through <site origin>/.well-known/clawhub.json:
//     the path of --site is dropped and the request carries no token.
//     When discovery fails it falls back to the registry cached in its
//     config file, and without one to its public default host. So every
//     run here gets a config file whose registry is this server: no run
//     can leave the machine;
//   - the only place a token comes from is that config file
//     (CLAWHUB_CONFIG_PATH), sent as Authorization: Bearer;
//   - install unpacks the download zip as it is into
//     <workdir>/skills/<slug>/ (raw bytes, a leading BOM kept, modes
//     dropped: files come out 0644, so only bytes are compared) and adds
//     <slug>/.clawhub/origin.json and <workdir>/.clawhub/lock.json.
const clawhubPkg = page.ClawhubCLIPackage

// clawScopedSecret is the read token of TestClawHubCLIPrivate that sees
// code-* only (it holds "secret-0123", which fixture.AssertNoSecret
// looks for).
const clawScopedSecret = "claw-secret-0123456789abcd"

// clawRun is what one clawhub run gave.
type clawRun struct {
	code           int
	stdout, stderr string
}

func (r clawRun) String() string {
	return "exit " + strconv.Itoa(r.code) + "\nstdout:\n" + r.stdout + "\nstderr:\n" + r.stderr
}

// all is stdout and stderr, which the CLI splits between success and
// failure lines.
func (r clawRun) all() string { return r.stdout + r.stderr }

// clawhubCLI runs `clawhub --workdir workdir --no-input args...` through
// npx with the config file config, telemetry off and none of the user's
// CLAWHUB_ variables, and returns its exit code and output (ANSI escapes
// removed). args must name the server (--site or --registry).
func clawhubCLI(t *testing.T, npx, config, workdir string, args ...string) clawRun {
	t.Helper()
	if !slices.Contains(args, "--site") && !slices.Contains(args, "--registry") {
		t.Fatalf("clawhub %q: name the server with --site or --registry", args)
	}
	var env []string
	for _, kv := range cliEnv(t, nil) {
		k, _, _ := strings.Cut(kv, "=")
		// CLAWHUB_REGISTRY would win over --site; CLAWHUB_WORKDIR and
		// a config path of the user's have no place here either.
		if strings.HasPrefix(k, "CLAWHUB_") || strings.HasPrefix(k, "CLAWDHUB_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "CLAWHUB_CONFIG_PATH="+config, "CLAWHUB_DISABLE_TELEMETRY=1", "NO_COLOR=1",
		"npm_config_loglevel=error")

	ctx, cancel := context.WithTimeout(t.Context(), interopTimeout)
	defer cancel()
	full := append([]string{"-y", "-p", skillsCLINode, "-p", clawhubPkg, "--", "clawhub", "--workdir", workdir, "--no-input"}, args...)
	cmd := exec.CommandContext(ctx, npx, full...)
	cmd.Dir = workdir
	cmd.Env = env
	cmd.WaitDelay = 10 * time.Second // do not hang on a child holding a pipe
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	run := clawRun{stdout: ansiRE.ReplaceAllString(out.String(), ""), stderr: ansiRE.ReplaceAllString(errOut.String(), "")}
	t.Logf("clawhub %s: %v in %s\n%s%s", strings.Join(args, " "), errOrOK(err), time.Since(start).Round(time.Millisecond), run.stdout, run.stderr)
	if ctx.Err() != nil {
		t.Fatalf("clawhub %s did not end within %s (%v)", strings.Join(args, " "), interopTimeout, err)
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		run.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("npx clawhub: %v", err)
	}
	return run
}

// clawConfig writes a clawhub config file naming registry, with token
// unless it is empty, and returns its path.
func clawConfig(t *testing.T, registry, token string) string {
	t.Helper()
	cfg := map[string]string{"registry": registry}
	if token != "" {
		cfg["token"] = token
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// clawAPIBase fetches base's /.well-known/clawhub.json (auth as the
// Authorization header, none when empty) and checks its apiBase is
// base/clawhub.
func clawAPIBase(t *testing.T, base, auth string) string {
	t.Helper()
	resp, body := fixture.Fetch(t, http.MethodGet, base+"/.well-known/clawhub.json", auth, "")
	var doc struct {
		APIBase string `json:"apiBase"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &doc) != nil {
		t.Fatalf("GET %s/.well-known/clawhub.json: %d %s", base, resp.StatusCode, body)
	}
	if want := base + "/clawhub"; doc.APIBase != want {
		t.Fatalf("GET %s/.well-known/clawhub.json: apiBase %q, want %q", base, doc.APIBase, want)
	}
	return doc.APIBase
}

// checkClawInstalled compares the skill clawhub installed at dst, less
// its .clawhub/ folder, with the folder src on disk, byte for byte, and
// checks origin.json records version.
func checkClawInstalled(t *testing.T, dst, src, version string) {
	t.Helper()
	got := fixture.ReadTree(t, dst, func(rel string) bool { return rel == ".clawhub" || strings.HasPrefix(rel, ".clawhub/") })
	want := fixture.ReadTree(t, src, func(string) bool { return false })
	if !slices.Equal(sortedKeys(got), sortedKeys(want)) {
		t.Errorf("%s: installed files %v, want %v (from %s)", dst, sortedKeys(got), sortedKeys(want), src)
	}
	for p, w := range want {
		if g, ok := got[p]; ok && !bytes.Equal(g, w) {
			t.Errorf("%s/%s: installed bytes differ from %s\n got: %q\nwant: %q", dst, p, filepath.Join(src, filepath.FromSlash(p)), g, w)
		}
	}
	b, err := os.ReadFile(filepath.Join(dst, ".clawhub", "origin.json"))
	var origin struct{ Slug, InstalledVersion string }
	if err != nil || json.Unmarshal(b, &origin) != nil || origin.InstalledVersion != version || origin.Slug != filepath.Base(dst) {
		t.Errorf("%s/.clawhub/origin.json (%v) = %s, want slug %s and installedVersion %s", dst, err, b, filepath.Base(dst), version)
	}
}

// clawLock reads <workdir>/.clawhub/lock.json: slug -> version.
func clawLock(t *testing.T, workdir string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(workdir, ".clawhub", "lock.json"))
	var lock struct {
		Skills map[string]struct{ Version string }
	}
	if err != nil || json.Unmarshal(b, &lock) != nil {
		t.Fatalf("%s/.clawhub/lock.json: %v\n%s", workdir, err, b)
	}
	out := map[string]string{}
	for k, v := range lock.Skills {
		out[k] = v.Version
	}
	return out
}

// lineRE is the multi-line pattern format with each of quoted, literal,
// in its %s verbs.
func lineRE(format string, quoted ...string) *regexp.Regexp {
	args := make([]any, len(quoted))
	for i, q := range quoted {
		args[i] = regexp.QuoteMeta(q)
	}
	return regexp.MustCompile("(?m)" + fmt.Sprintf(format, args...))
}

// TestClawHubCLI serves the example tree and drives it with the real
// clawhub CLI through discovery (--site): search, inspect with versions
// and files, install of every skill the RFC index lists, update of an
// up-to-date tree and of an old version, and an unknown skill.
func TestClawHubCLI(t *testing.T) {
	npx := requireInterop(t)
	skillsRoot, agents := exampleTree(t)
	ts := startServer(t, "--skills", skillsRoot, "--agents", agents)
	clawAPIBase(t, ts.URL, "")
	// The config's registry, which the CLI falls back to when discovery
	// fails, is a path of this server that is not the API: every run
	// below then fails unless --site's discovery worked.
	config := clawConfig(t, ts.URL+"/not-the-clawhub-api", "")
	site := []string{"--site", ts.URL}
	cli := func(t *testing.T, workdir string, args ...string) clawRun {
		t.Helper()
		return clawhubCLI(t, npx, config, workdir, append(slices.Clone(site), args...)...)
	}

	idx := ts.Index(t)
	versions := map[string]string{} // name -> version the index lists
	var names []string
	for _, s := range idx.Skills {
		versions[s.Name] = s.Version
		names = append(names, s.Name)
	}
	slices.Sort(names)
	if !slices.Contains(names, "k8s-deploy") || versions["k8s-deploy"] != "1.2.0" {
		t.Fatalf("the index lists %v (k8s-deploy at %q); this test expects k8s-deploy 1.2.0", names, versions["k8s-deploy"])
	}
	k8s := filepath.Join(skillsRoot, "k8s-deploy")
	if dir, v := latestVersionDir(t, k8s); v != "1.2.0" {
		t.Fatalf("k8s-deploy: latest release on disk is %q (%s); this test expects 1.2.0", v, dir)
	}

	t.Run("search", func(t *testing.T) {
		run := cli(t, t.TempDir(), "search", "kube")
		if run.code != 0 || !lineRE(`^%s v%s\s`, "k8s-deploy", "1.2.0").MatchString(run.stdout) {
			t.Errorf("search kube: want exit 0 and a line `k8s-deploy v1.2.0 ...`, got %s", run)
		}
	})

	t.Run("inspect", func(t *testing.T) {
		run := cli(t, t.TempDir(), "inspect", "k8s-deploy", "--versions", "--files")
		if run.code != 0 {
			t.Fatalf("inspect: %s", run)
		}
		versionsPart, filesPart, ok := strings.Cut(run.stdout, "\nFiles:\n")
		if !ok {
			t.Fatalf("inspect --files printed no Files: section:\n%s", run.stdout)
		}
		for _, v := range []string{"2.0.0-rc.1", "1.2.0", "1.0.0"} {
			if !lineRE(`^%s\s`, v).MatchString(versionsPart) {
				t.Errorf("inspect --versions does not list %s:\n%s", v, run.stdout)
			}
		}
		files := fixture.ReadTree(t, filepath.Join(k8s, "1.2.0"), func(string) bool { return false })
		for p, b := range files {
			sum := sha256.Sum256(b)
			if !lineRE(`^%s\s+%sB\s+%s\b`, p, strconv.Itoa(len(b)), hex.EncodeToString(sum[:])).MatchString(filesPart) {
				t.Errorf("inspect --files has no line `%s  %dB  %x` for 1.2.0:\n%s", p, len(b), sum, filesPart)
			}
		}
		if n := len(regexp.MustCompile(`(?m)^\S+\s+\d+B\s+[0-9a-f]{64}\b`).FindAllString(filesPart, -1)); n != len(files) {
			t.Errorf("inspect --files lists %d files, want the %d of 1.2.0:\n%s", n, len(files), filesPart)
		}
	})

	t.Run("install and update", func(t *testing.T) {
		wd := t.TempDir()
		skillsDir := filepath.Join(wd, "skills")
		for _, name := range names {
			run := cli(t, wd, "install", name)
			if run.code != 0 || !strings.Contains(run.stdout, "Installed "+name+" v"+versions[name]+" -> ") {
				t.Errorf("install %s: want exit 0 and `Installed %s v%s -> ...`, got %s", name, name, versions[name], run)
				continue
			}
			src, _ := latestVersionDir(t, filepath.Join(skillsRoot, name))
			if name == "k8s-deploy" {
				src = filepath.Join(k8s, "1.2.0")
			}
			checkClawInstalled(t, filepath.Join(skillsDir, name), src, versions[name])
		}
		if installed, err := installedNames(skillsDir); err != nil || !slices.Equal(installed, names) {
			t.Errorf("%s holds %v (%v), want %v", skillsDir, installed, err, names)
		}
		if lock := clawLock(t, wd); !maps.Equal(lock, versions) {
			t.Errorf("lock.json = %v, want %v", lock, versions)
		}
		if t.Failed() {
			t.FailNow()
		}

		run := cli(t, wd, "update", "--all")
		if run.code != 0 {
			t.Errorf("update --all: %s", run)
		}
		for _, name := range names {
			if !lineRE(`^%s up to date v%s$`, name, versions[name]).MatchString(run.stdout) {
				t.Errorf("update --all does not say `%s up to date v%s`:\n%s", name, versions[name], run)
			}
		}
		if strings.Contains(run.all(), "Updated") {
			t.Errorf("update --all updated something in an up-to-date tree:\n%s", run)
		}

		run = cli(t, wd, "install", "k8s-deploy", "--version", "1.0.0", "--force")
		if run.code != 0 || !strings.Contains(run.stdout, "Installed k8s-deploy v1.0.0 -> ") {
			t.Fatalf("install k8s-deploy --version 1.0.0 --force: %s", run)
		}
		checkClawInstalled(t, filepath.Join(skillsDir, "k8s-deploy"), filepath.Join(k8s, "1.0.0"), "1.0.0")

		run = cli(t, wd, "update", "k8s-deploy")
		if run.code != 0 || !lineRE(`^Updated %s$`, "k8s-deploy -> v1.2.0").MatchString(run.stdout) {
			t.Fatalf("update k8s-deploy from 1.0.0: want exit 0 and `Updated k8s-deploy -> v1.2.0`, got %s", run)
		}
		checkClawInstalled(t, filepath.Join(skillsDir, "k8s-deploy"), filepath.Join(k8s, "1.2.0"), "1.2.0")
		if lock := clawLock(t, wd); lock["k8s-deploy"] != "1.2.0" {
			t.Errorf("lock.json after update = %v, want k8s-deploy at 1.2.0", lock)
		}
		// The reinstall stages and backs up beside the skill: nothing of
		// that may stay.
		if installed, err := installedNames(skillsDir); err != nil || !slices.Equal(installed, names) {
			t.Errorf("after the update %s holds %v (%v), want %v", skillsDir, installed, err, names)
		}
	})

	t.Run("unknown skill", func(t *testing.T) {
		run := cli(t, t.TempDir(), "inspect", "nope")
		if run.code == 0 || !strings.Contains(run.stderr, "Skill not found") {
			t.Errorf("inspect nope: want a non-zero exit and `Skill not found ...` on stderr, got %s", run)
		}
	})

	requested := clawRequests(t, ts)
	if !slices.Contains(requested, "GET /.well-known/clawhub.json 200") {
		t.Errorf("the CLI never discovered the API through /.well-known/clawhub.json")
	}
	for _, r := range requested {
		if strings.Contains(r, "not-the-clawhub-api") {
			t.Errorf("the CLI fell back to its config's registry: %s", r)
		}
	}
}

// clawRequests lists the requests the server logged for the CLI's
// discovery and API, as "METHOD path status", sorted and deduplicated,
// and logs them (tokens in paths are redacted in the log).
func clawRequests(t *testing.T, ts *testServer) []string {
	t.Helper()
	var lines []string
	for line := range strings.Lines(ts.Logged(t)) {
		var e struct {
			Msg, Method, Path string
			Status            int
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "request" && !strings.HasPrefix(e.Path, "/log-marker-") &&
			(strings.Contains(e.Path, "clawhub") || strings.Contains(e.Path, "clawdhub")) {
			lines = append(lines, e.Method+" "+e.Path+" "+strconv.Itoa(e.Status))
		}
	}
	slices.Sort(lines)
	lines = slices.Compact(lines)
	t.Logf("the CLI requested:\n%s", strings.Join(lines, "\n"))
	return lines
}

// TestClawHubCLIPrivate drives a private feed with the real clawhub CLI:
// a whole-tree token and a token scoped to code-*, each from the CLI's
// config file (sent as a Bearer header), a path token in the registry
// URL, no token, and a write under a token.
//
// These runs name the API with --registry: the CLI discovers --site at
// the site's origin without a token (it drops the path, so a /t/<secret>
// site too), which a private feed refuses, and it would then just use
// the config file's registry.
func TestClawHubCLIPrivate(t *testing.T) {
	npx := requireInterop(t)
	skillsRoot, agents := exampleTree(t)
	tokens := filepath.Join(t.TempDir(), "tokens")
	fixture.WriteTokens(t, tokens, "# read tokens of the clawhub test\nall "+fixture.AllSecret+" *\ncode "+clawScopedSecret+" code-*\n")
	ts := startServer(t, "--skills", skillsRoot, "--agents", agents, "--read-tokens-file", tokens)
	apiBase := clawAPIBase(t, ts.URL, "Bearer "+fixture.AllSecret)
	k8s := filepath.Join(skillsRoot, "k8s-deploy", "1.2.0")
	codeReview := filepath.Join(skillsRoot, "code-review")
	codeVersion := ""
	for _, s := range fixture.GetIndex(t, ts.URL, "Bearer "+clawScopedSecret).Skills {
		if s.Name == "code-review" {
			codeVersion = s.Version
		} else if !strings.HasPrefix(s.Name, "code-") {
			t.Fatalf("the code-* token's index lists %s", s.Name)
		}
	}
	if codeVersion == "" {
		t.Fatal("the code-* token's index does not list code-review")
	}
	// cli runs clawhub on registry with token (none when empty) in its
	// config file.
	cli := func(t *testing.T, registry, token, workdir string, args ...string) clawRun {
		t.Helper()
		return clawhubCLI(t, npx, clawConfig(t, registry, token), workdir, append([]string{"--registry", registry}, args...)...)
	}

	t.Run("whole-tree token", func(t *testing.T) {
		wd := t.TempDir()
		run := cli(t, apiBase, fixture.AllSecret, wd, "install", "k8s-deploy")
		if run.code != 0 || !strings.Contains(run.stdout, "Installed k8s-deploy v1.2.0 -> ") {
			t.Fatalf("install k8s-deploy with the whole-tree token: %s", run)
		}
		checkClawInstalled(t, filepath.Join(wd, "skills", "k8s-deploy"), k8s, "1.2.0")
	})

	t.Run("site and a configured token", func(t *testing.T) {
		// The discovery document is open on a private feed, so --site
		// finds the API and the configured token opens it; the config's
		// own registry points elsewhere, so nothing but discovery can
		// have found it.
		wd := t.TempDir()
		run := clawhubCLI(t, npx, clawConfig(t, ts.URL+"/not-the-clawhub-api", fixture.AllSecret), wd, "--site", ts.URL, "install", "k8s-deploy")
		if run.code != 0 || !strings.Contains(run.stdout, "Installed k8s-deploy v1.2.0 -> ") {
			t.Fatalf("install k8s-deploy with --site and the whole-tree token: %s", run)
		}
		checkClawInstalled(t, filepath.Join(wd, "skills", "k8s-deploy"), k8s, "1.2.0")
	})

	t.Run("scoped token", func(t *testing.T) {
		wd := t.TempDir()
		run := cli(t, apiBase, clawScopedSecret, wd, "inspect", "k8s-deploy")
		if run.code == 0 || !strings.Contains(run.stderr, "Skill not found") {
			t.Errorf("inspect k8s-deploy with the code-* token: want a non-zero exit and `Skill not found`, got %s", run)
		}
		run = cli(t, apiBase, clawScopedSecret, wd, "install", "code-review")
		if run.code != 0 || !strings.Contains(run.stdout, "Installed code-review v"+codeVersion+" -> ") {
			t.Fatalf("install code-review with the code-* token: %s", run)
		}
		checkClawInstalled(t, filepath.Join(wd, "skills", "code-review"), codeReview, codeVersion)
	})

	t.Run("path token", func(t *testing.T) {
		// The discovery document under the path token names the API
		// under it; the CLI then sends no header at all.
		registry := clawAPIBase(t, ts.URL+"/t/"+clawScopedSecret, "")
		wd := t.TempDir()
		run := cli(t, registry, "", wd, "install", "code-review")
		if run.code != 0 || !strings.Contains(run.stdout, "Installed code-review v"+codeVersion+" -> ") {
			t.Fatalf("install code-review through %s/t/<secret>/clawhub: %s", ts.URL, run)
		}
		checkClawInstalled(t, filepath.Join(wd, "skills", "code-review"), codeReview, codeVersion)
		run = cli(t, registry, "", wd, "inspect", "k8s-deploy")
		if run.code == 0 || !strings.Contains(run.stderr, "Skill not found") {
			t.Errorf("inspect k8s-deploy under the code-* path token: want a non-zero exit and `Skill not found`, got %s", run)
		}
	})

	t.Run("no token", func(t *testing.T) {
		for _, args := range [][]string{{"search", "kube"}, {"inspect", "k8s-deploy"}} {
			wd := t.TempDir()
			run := cli(t, apiBase, "", wd, args...)
			if run.code == 0 || strings.Contains(run.stdout, "k8s-deploy") {
				t.Errorf("%s without a token: want a non-zero exit and no skill shown, got %s", strings.Join(args, " "), run)
			}
		}
	})

	t.Run("read-only", func(t *testing.T) {
		run := cli(t, apiBase, fixture.AllSecret, t.TempDir(), "star", "k8s-deploy", "--yes")
		if run.code == 0 || !strings.Contains(run.stderr, "read-only") {
			t.Errorf("star k8s-deploy with a token: want a non-zero exit and the server's `This registry is read-only...`, got %s", run)
		}
		// Without a token the CLI refuses before it sends anything.
		run = cli(t, apiBase, "", t.TempDir(), "star", "k8s-deploy", "--yes")
		if run.code == 0 || !strings.Contains(run.stderr, "Not logged in") {
			t.Errorf("star k8s-deploy without a token: want a non-zero exit and `Not logged in`, got %s", run)
		}
	})

	for _, r := range clawRequests(t, ts) {
		// The path token is never refused as a token (it may not see
		// a skill: a 404).
		if strings.HasPrefix(r, "GET /t/") && strings.HasSuffix(r, " 401") {
			t.Errorf("the path token was refused: %s", r)
		}
	}
	fixture.AssertNoSecret(t, ts)
}
