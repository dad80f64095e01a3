//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/skillserver/skillserver/internal/feed"
)

// TestInteropSkillsFind runs the real `skills find` against the server
// (SKILLS_API_URL), then the install step the CLI runs for a chosen result
// (`skills add SOURCE --skill NAME`, with -y -a universal because no
// terminal is attached) with the source it printed, and checks the
// download was counted in the next find.
func TestInteropSkillsFind(t *testing.T) {
	npx := requireInterop(t)
	skillsRoot, agents := exampleTree(t)
	ts := startServer(t, "--skills", skillsRoot, "--agents", agents)
	env := []string{"SKILLS_API_URL=" + ts.URL}

	_, out, err := skillsCLIEnv(t, npx, t.TempDir(), env, "find", "kube")
	if err != nil {
		t.Fatalf("skills find: %v\n%s", err, out)
	}
	t.Logf("skills find kube:\n%s", out)
	m := regexp.MustCompile(`(?m)^(\S+)@k8s-deploy\b`).FindStringSubmatch(out)
	if m == nil || m[1] != ts.URL {
		t.Fatalf("skills find kube does not print %s@k8s-deploy:\n%s", ts.URL, out)
	}

	dir := t.TempDir()
	_, out, err = skillsCLIEnv(t, npx, dir, env, "add", m[1], "--skill", "k8s-deploy", "-y", "-a", "universal")
	if err != nil {
		t.Fatalf("skills add %s --skill k8s-deploy: %v\n%s", m[1], err, out)
	}
	idx := ts.Index(t)
	for _, s := range idx.Skills {
		if s.Name == "k8s-deploy" {
			checkInstalled(t, skillsRoot, filepath.Join(dir, ".agents", "skills", "k8s-deploy"), s.Name, s.Version)
		}
	}

	resp, body := ts.Get(t, feed.PathFind+"?q=k8s-deploy")
	var found feed.FindResults
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &found) != nil || len(found.Skills) == 0 || found.Skills[0].Name != "k8s-deploy" {
		t.Fatalf("find k8s-deploy: %d %s", resp.StatusCode, body)
	}
	// skills@1.7.4 downloads every skill of the feed to list its files,
	// --skill or not, so each counts one download; k8s-deploy is the one
	// installed.
	if found.Skills[0].Installs != 1 {
		t.Errorf("k8s-deploy installs = %d after one install, want 1", found.Skills[0].Installs)
	}
	_, body = ts.Get(t, feed.PathFind+"?q=")
	t.Logf("after one `skills add --skill k8s-deploy`: %s", body)
	_, out, err = skillsCLIEnv(t, npx, t.TempDir(), env, "find", "k8s-deploy")
	if err != nil || !strings.Contains(out, ts.URL+"@k8s-deploy") {
		t.Errorf("second skills find: %v\n%s", err, out)
	}
	t.Logf("skills find k8s-deploy after one install:\n%s", out)
}

// TestInteropSkillsFindInteractive drives the real `skills find` in a
// terminal (a pty from script(1)): it types a query, waits for this
// server's result, chooses it, and answers the install prompts with their
// defaults (project scope, symlink, proceed). The CLI then installs the
// skill from the source this server gave. Each key is sent once the
// prompt it answers has been printed.
func TestInteropSkillsFindInteractive(t *testing.T) {
	npx := requireInterop(t)
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed; it provides the terminal")
	}
	skillsRoot, agents := exampleTree(t)
	ts := startServer(t, "--skills", skillsRoot, "--agents", agents)
	dir := t.TempDir()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cli := strings.Join([]string{npx, "-y", "-p", skillsCLINode, "-p", skillsCLIPkg, "--", "skills", "find"}, " ")
	cmd := exec.CommandContext(ctx, scriptBin, "-qfec", cli, os.DevNull)
	cmd.Dir = dir
	cmd.Env = cliEnv(t, []string{"SKILLS_API_URL=" + ts.URL, "TERM=xterm", "COLUMNS=160", "LINES=50"})
	cmd.WaitDelay = 10 * time.Second
	// Its own process group, so the CLI's node processes under script end
	// with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		}
	}()

	var seen strings.Builder
	buf := make([]byte, 4096)
	from := 0 // what the terminal printed before this is answered
	// waitFor reads the terminal until it prints one of wants after from,
	// and returns it.
	waitFor := func(wants ...string) string {
		t.Helper()
		for {
			text := letters(ansiRE.ReplaceAllString(seen.String(), ""))
			best, at := "", -1
			for _, w := range wants {
				if k := strings.Index(text[min(from, len(text)):], letters(w)); k >= 0 && (at < 0 || k < at) {
					best, at = w, k
				}
			}
			if at >= 0 {
				from += at + len(letters(best))
				return best
			}
			n, err := stdout.Read(buf)
			seen.Write(buf[:n])
			if err != nil {
				t.Fatalf("terminal closed before %q: %v\n%s", wants, err, ansiRE.ReplaceAllString(seen.String(), ""))
			}
		}
	}
	send := func(keys string) {
		t.Helper()
		if _, err := io.WriteString(stdin, keys); err != nil {
			t.Fatal(err)
		}
	}
	waitFor("Search skills:")
	send("kube")
	waitFor("k8s-deploy " + ts.URL)
	send("\r")
	waitFor("Installing k8s-deploy from " + ts.URL)
	// The prompts depend on the agents the CLI detects; each is answered
	// with its default.
	prompts := []string{"Which agents do you want to install to?", "Installation scope", "Installation method", "Proceed with installation?"}
	for waitFor(append(prompts, "Done!")...) != "Done!" {
		send("\r")
	}
	// What follows offers the vendor's own skill: Ctrl-C declines it and
	// ends the CLI (script(1) ran it in a session of its own, out of reach
	// of a kill of script's process group), before its folders are removed.
	waitFor("find-skills")
	send("\x03")
	if err := cmd.Wait(); err != nil {
		t.Logf("skills find after Ctrl-C: %v", err)
	}

	for _, s := range ts.Index(t).Skills {
		if s.Name == "k8s-deploy" {
			checkInstalled(t, skillsRoot, filepath.Join(dir, ".agents", "skills", "k8s-deploy"), s.Name, s.Version)
		}
	}
	if t.Failed() {
		t.Logf("terminal:\n%s", ansiRE.ReplaceAllString(seen.String(), ""))
	}
}

// letters keeps the letters and digits of s: the CLI redraws its prompts
// in place, so the text between them is cursor movement and box drawing.
func letters(s string) string {
	return strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return -1
	}, s)
}
