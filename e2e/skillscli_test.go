//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/fixture"
	"github.com/skillserver/skillserver/internal/page"
)

// The interop tests drive real clients against the real program. They need
// the network (npm registry) on first run, so they only run when asked:
//
//	SKILLSERVER_INTEROP=1 go test -run Interop ./e2e/
//
// `make test` (and so CI) always sets SKILLSERVER_INTEROP=1.

const (
	// skillsCLI is the `skills` npm CLI pinned to a known version, run on
	// Node 22 (it needs >= 22.20; the machine's node may be older). npm
	// prints an EBADENGINE warning while installing because it checks the
	// engine against the machine's node; the CLI itself runs on node@22.
	// The release the pages' install lines name is the one tested.
	skillsCLINode = page.CLINode
	skillsCLIPkg  = page.SkillsCLIPackage
	// interopTimeout bounds one npx run; a cold run downloads Node 22.
	interopTimeout = 5 * time.Minute
)

func requireInterop(t *testing.T) string {
	t.Helper()
	if os.Getenv("SKILLSERVER_INTEROP") != "1" {
		t.Skip("interop test with real clients; enable with SKILLSERVER_INTEROP=1 (make test does)")
	}
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Fatalf("SKILLSERVER_INTEROP=1 but npx is not on PATH (install Node.js and npm): %v", err)
	}
	return npx
}

// npmCacheDir returns the npm cache the user's own environment resolves to
// (npm_config_cache, ~/.npmrc or the default ~/.npm). The CLI runs with a
// scratch HOME, under which npm would otherwise use a brand new cache and
// download Node 22 and the CLI again on every run (~15 s instead of ~1 s).
// Empty when it cannot be determined; npm then uses the scratch HOME.
func npmCacheDir(t *testing.T) (cache, userconfig string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "npm", "config", "get", "cache", "userconfig").Output()
	if err != nil {
		t.Logf("npm config get cache: %v (using a scratch npm cache)", err)
		return "", ""
	}
	for line := range strings.Lines(string(out)) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || v == "" || v == "null" || v == "undefined" {
			continue
		}
		switch k {
		case "cache":
			cache = v
		case "userconfig":
			userconfig = v
		}
	}
	return cache, userconfig
}

// skillsCLI runs `skills args...` through npx in dir with a scratch HOME and
// returns its combined output (ANSI escapes removed) and error.
func skillsCLI(t *testing.T, npx, dir string, args ...string) (string, error) {
	t.Helper()
	_, combined, err := skillsCLIStdout(t, npx, dir, args...)
	return combined, err
}

// skillsCLIStdout is skillsCLI that also returns what the CLI wrote to
// stdout alone, byte for byte (escapes and all). The CLI runs with a
// scratch TMPDIR too: `skills use` leaves its download there.
func skillsCLIStdout(t *testing.T, npx, dir string, args ...string) (stdout []byte, combined string, err error) {
	t.Helper()
	return skillsCLIEnv(t, npx, dir, nil, args...)
}

// skillsCLIEnv is skillsCLIStdout with extra environment variables.
func skillsCLIEnv(t *testing.T, npx, dir string, extraEnv []string, args ...string) (stdout []byte, combined string, err error) {
	t.Helper()
	env := cliEnv(t, extraEnv)
	ctx, cancel := context.WithTimeout(t.Context(), interopTimeout)
	defer cancel()
	full := append([]string{"-y", "-p", skillsCLINode, "-p", skillsCLIPkg, "--", "skills"}, args...)
	cmd := exec.CommandContext(ctx, npx, full...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.WaitDelay = 10 * time.Second // do not hang on a child holding the pipe
	// Two pipes, so two goroutines write: the combined buffer is locked.
	var out fixture.SyncBuffer
	var stdoutBuf bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, &stdoutBuf)
	cmd.Stderr = &out
	start := time.Now()
	err = cmd.Run()
	t.Logf("npx %s: %v in %s", strings.Join(full, " "), errOrOK(err), time.Since(start).Round(time.Millisecond))
	if ctx.Err() != nil {
		err = errors.Join(err, ctx.Err())
	}
	return stdoutBuf.Bytes(), ansiRE.ReplaceAllString(out.String(), ""), err
}

// cliEnv is the environment the CLI runs with: the user's, minus the XDG
// folders, with a scratch HOME and TMPDIR, telemetry off, the user's npm
// cache and configuration, and extraEnv last.
func cliEnv(t *testing.T, extraEnv []string) []string {
	t.Helper()
	home := t.TempDir()
	tmp := t.TempDir()
	cache, userconfig := npmCacheDir(t)

	env := make([]string, 0, len(os.Environ())+8)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		// The XDG dirs would point the CLI back at the real home.
		if strings.HasPrefix(k, "XDG_") {
			continue
		}
		env = append(env, kv)
	}
	// exec.Cmd keeps the last value of a duplicate key.
	env = append(env, "HOME="+home, "TMPDIR="+tmp, "DISABLE_TELEMETRY=1", "DO_NOT_TRACK=1",
		"NO_COLOR=1", "npm_config_update_notifier=false", "npm_config_fund=false")
	env = append(env, extraEnv...)
	if cache != "" {
		env = append(env, "npm_config_cache="+cache)
	}
	if userconfig != "" {
		// Keep the user's registry/proxy settings despite the scratch HOME.
		env = append(env, "npm_config_userconfig="+userconfig)
	}

	return env
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

func errOrOK(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// TestInteropSkillsCLI installs the whole example tree with the real
// `skills` npm CLI (`npx skills add <url>`) and checks that every skill of
// the RFC index lands in ./.agents/skills/<name>/ with the bytes on disk.
//
// What skills@1.7.4 does with what it downloads (read from its dist/cli.mjs
// and observed here):
//   - it verifies each artifact's sha256 against the index and silently
//     skips the skill on a mismatch, so an installed skill proves the digest;
//   - it decodes SKILL.md with `new TextDecoder().decode(bytes)` and writes
//     the string back, which drops a leading UTF-8 BOM (release-notes has
//     one: the server serves it, the CLI does not keep it). CRLF survives.
//     Every other file is written as the raw bytes;
//   - it does NOT preserve file modes: archive entries become a path->bytes
//     map and are written with the default mode, so scripts/deploy.sh is
//     installed 0644 although the zip (and the index's unixMode) say 0755.
//     The mode is therefore not asserted here;
//   - it writes ./skills-lock.json with the index digest of each skill.
func TestInteropSkillsCLI(t *testing.T) {
	npx := requireInterop(t)
	skillsRoot, agents := exampleTree(t)
	ts := startServer(t, "--skills", skillsRoot, "--agents", agents)

	idx := ts.Index(t)
	if len(idx.Skills) == 0 {
		t.Fatal("index lists no skills")
	}
	var names []string
	for _, s := range idx.Skills {
		names = append(names, s.Name)
	}
	slices.Sort(names)

	t.Run("list", func(t *testing.T) {
		dir := t.TempDir()
		out, err := skillsCLI(t, npx, dir, "add", ts.URL, "--list")
		if err != nil {
			t.Fatalf("skills add --list: %v\n%s", err, out)
		}
		for _, name := range names {
			if !regexp.MustCompile(`(?m)\b` + regexp.QuoteMeta(name) + `\b`).MatchString(out) {
				t.Errorf("skills add --list does not show %q:\n%s", name, out)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, ".agents")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("--list installed something (stat .agents: %v)", err)
		}
	})

	t.Run("add", func(t *testing.T) {
		dir := t.TempDir()
		// '*' is a literal argv element: no shell is involved.
		out, err := skillsCLI(t, npx, dir, "add", ts.URL, "-y", "-a", "universal", "--skill", "*")
		if err != nil {
			t.Fatalf("skills add: %v\n%s", err, out)
		}
		installRoot := filepath.Join(dir, ".agents", "skills")
		installed, err := installedNames(installRoot)
		if err != nil {
			t.Fatalf("read %s: %v\n%s", installRoot, err, out)
		}
		if !slices.Equal(installed, names) {
			t.Errorf("installed skills = %v, index lists %v\nCLI output:\n%s", installed, names, out)
		}

		for _, s := range idx.Skills {
			checkInstalled(t, skillsRoot, filepath.Join(installRoot, s.Name), s.Name, s.Version)
		}

		// The prerelease of k8s-deploy exists on disk and must not win.
		rc, err := os.ReadFile(filepath.Join(skillsRoot, "k8s-deploy", "2.0.0-rc.1", "SKILL.md"))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(installRoot, "k8s-deploy", "SKILL.md")); err == nil && bytes.Equal(got, rc) {
			t.Error("k8s-deploy: the prerelease 2.0.0-rc.1 was installed instead of the latest release")
		}

		// The lock file records the digest the CLI verified for each skill.
		lock := readSkillsLock(t, dir)
		for _, s := range idx.Skills {
			l, ok := lock.Skills[s.Name]
			if !ok || l.SourceType != "well-known" || l.WellKnownDigest != s.Digest {
				t.Errorf("skills-lock.json %s = %+v (present %v), want well-known with digest %s", s.Name, l, ok, s.Digest)
			}
		}
		if t.Failed() {
			t.Logf("CLI output:\n%s", out)
		}
	})

	// One skill by URL: given https://host/skill/<name>, skills@1.7.4
	// (WellKnownProvider.fetchAllSkills) requests
	// /skill/<name>/.well-known/agent-skills/index.json and
	// /skill/<name>/.well-known/skills/index.json, and the same two at the
	// root, but installs only from the scoped ones: when they list nothing
	// it fails rather than fall back to the root. So only <name> lands.
	t.Run("add scoped URL", func(t *testing.T) {
		const name = "code-review"
		var digest, version string
		for _, s := range idx.Skills {
			if s.Name == name {
				digest, version = s.Digest, s.Version
			}
		}
		if digest == "" {
			t.Fatalf("the index does not list %s", name)
		}
		resp, body := ts.Get(t, "/skill/"+name+"/.well-known/agent-skills/index.json")
		var scoped fixture.RFCIndex
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &scoped) != nil ||
			len(scoped.Skills) != 1 || scoped.Skills[0].Name != name || scoped.Skills[0].Digest != digest {
			t.Fatalf("scoped index of %s: status %d, want one entry equal to the root index's:\n%s", name, resp.StatusCode, body)
		}

		dir := t.TempDir()
		url := ts.URL + "/skill/" + name
		out, err := skillsCLI(t, npx, dir, "add", url, "-y", "-a", "universal", "--skill", "*")
		if err != nil {
			t.Fatalf("skills add %s: %v\n%s", url, err, out)
		}
		installRoot := filepath.Join(dir, ".agents", "skills")
		installed, err := installedNames(installRoot)
		if err != nil {
			t.Fatalf("read %s: %v\n%s", installRoot, err, out)
		}
		if !slices.Equal(installed, []string{name}) {
			t.Errorf("skills add %s installed %v, want only %s", url, installed, name)
		}
		checkInstalled(t, skillsRoot, filepath.Join(installRoot, name), name, version)

		lock := readSkillsLock(t, dir)
		if l, ok := lock.Skills[name]; len(lock.Skills) != 1 || !ok ||
			l.SourceType != "well-known" || l.SourceURL != url || l.WellKnownDigest != digest {
			t.Errorf("skills-lock.json = %+v, want only %s, well-known from %s with digest %s", lock.Skills, name, url, digest)
		}
		if t.Failed() {
			t.Logf("CLI output:\n%s", out)
		}
	})

	// `skills use <url> --skill <name>` installs nothing: it prints a
	// prompt holding the SKILL.md to stdout and downloads the other files
	// to a temporary folder, whose path it prints too.
	t.Run("use", func(t *testing.T) {
		const name = "k8s-deploy"
		srcDir, version := latestVersionDir(t, filepath.Join(skillsRoot, name))
		if version != "1.2.0" {
			t.Fatalf("%s: latest release on disk is %q; this test expects 1.2.0", name, version)
		}
		skillMD, err := os.ReadFile(filepath.Join(srcDir, "SKILL.md"))
		if err != nil {
			t.Fatal(err)
		}
		skillMD = bytes.TrimPrefix(skillMD, utf8BOM) // decoded by TextDecoder, as for add

		dir := t.TempDir()
		stdout, out, err := skillsCLIStdout(t, npx, dir, "use", ts.URL, "--skill", name)
		if err != nil {
			t.Fatalf("skills use %s --skill %s: %v\n%s", ts.URL, name, err, out)
		}
		if !bytes.Contains(stdout, append(append([]byte("<SKILL.md>\n"), skillMD...), "\n</SKILL.md>"...)) {
			t.Errorf("skills use stdout does not hold %s between <SKILL.md> tags:\n%s", filepath.Join(srcDir, "SKILL.md"), stdout)
		}
		rc, err := os.ReadFile(filepath.Join(skillsRoot, name, "2.0.0-rc.1", "SKILL.md"))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(stdout, rc) {
			t.Errorf("skills use printed the prerelease 2.0.0-rc.1 of %s", name)
		}
		// The supporting files, downloaded to the folder the prompt names.
		if m := regexp.MustCompile(`downloaded to:\n(.+)\n`).FindSubmatch(stdout); m == nil {
			t.Errorf("skills use names no folder for the supporting files of %s:\n%s", name, stdout)
		} else {
			checkInstalled(t, skillsRoot, string(m[1]), name, version)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("skills use wrote into the working directory: %v", entries)
		}
		if t.Failed() {
			t.Logf("CLI output:\n%s", out)
		}
	})
}

// TestInteropSkillsCLIPrivateFeed installs every skill of a private feed
// with the real `skills` CLI, which can send no header: the token rides
// in the path (`skills add http://host/t/<token>`), and every URL of the
// index it reads keeps it. A scoped token installs only its skills;
// without a token nothing is installed.
func TestInteropSkillsCLIPrivateFeed(t *testing.T) {
	npx := requireInterop(t)
	skillsRoot, _ := exampleTree(t)
	ts, _ := startPrivate(t)
	for _, tc := range []struct {
		name, feed string
		want       []string
	}{
		{"every skill", ts.URL + "/t/" + fixture.AllSecret, []string{"code-review", "k8s-deploy", "release-notes", "support-triage", "windows-notes"}},
		{"scoped token", ts.URL + "/t/" + fixture.TeamSecret, []string{"code-review", "k8s-deploy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out, err := skillsCLI(t, npx, dir, "add", tc.feed, "-y", "-a", "universal", "--skill", "*")
			if err != nil {
				t.Fatalf("skills add: %v\n%s", err, out)
			}
			installRoot := filepath.Join(dir, ".agents", "skills")
			installed, err := installedNames(installRoot)
			if err != nil || !slices.Equal(installed, tc.want) {
				t.Fatalf("installed %v (%v), want %v\nCLI output:\n%s", installed, err, tc.want, out)
			}
			idx := fixture.GetIndex(t, tc.feed, "")
			for _, s := range idx.Skills {
				checkInstalled(t, skillsRoot, filepath.Join(installRoot, s.Name), s.Name, s.Version)
			}
			t.Logf("CLI output:\n%s", out)
		})
	}
	t.Run("no token", func(t *testing.T) {
		dir := t.TempDir()
		out, err := skillsCLI(t, npx, dir, "add", ts.URL, "-y", "-a", "universal", "--skill", "*")
		if installed, _ := installedNames(filepath.Join(dir, ".agents", "skills")); len(installed) != 0 || err == nil || !strings.Contains(out, "HTTP 401") {
			t.Errorf("without a token: installed %v, exit %v, want none, a failure and HTTP 401", installed, err)
		}
		t.Logf("without a token the CLI exits with %v:\n%s", err, out)
	})
	// What the CLI asked for, as the server logged it: paths with the
	// token replaced, and never a refusal under a valid token.
	var paths []string
	for line := range strings.Lines(ts.Logged(t)) {
		var e struct {
			Msg, Path, Token string
			Status           int
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "request" && e.Token != "" {
			paths = append(paths, e.Path)
			if e.Status >= 400 && !strings.Contains(e.Path, "/.well-known/skills/") {
				t.Errorf("%s answered %d under a valid token", e.Path, e.Status)
			}
		}
	}
	slices.Sort(paths)
	t.Logf("the CLI requested:\n%s", strings.Join(slices.Compact(paths), "\n"))
	fixture.AssertNoSecret(t, ts)
}
