//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/skillserver/skillserver/internal/fixture"
)

// pageLines fetches a page as a browser does and returns the text of its
// install lines.
func pageLines(t *testing.T, u string) []string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
	doc, err := html.Parse(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.Data == "code" && n.Parent != nil && n.Parent.Data == "pre" {
			var b strings.Builder
			for c := range n.Descendants() {
				if c.Type == html.TextNode {
					b.WriteString(c.Data)
				}
			}
			lines = append(lines, b.String())
		}
	}
	return lines
}

// TestInteropPageInstallLines pastes the install lines of a skill's page
// into the real clients: both skills CLI lines install what they say
// (the scoped one only that skill), the curl line saves the artifact's
// bytes, and the netclaw entry names a feed that answers with its key;
// on a private feed under a path token too.
func TestInteropPageInstallLines(t *testing.T) {
	npx := requireInterop(t)
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatalf("SKILLSERVER_INTEROP=1 but curl is not on PATH: %v", err)
	}
	skills, agents := exampleTree(t)
	public := startServer(t, "--skills", skills, "--agents", agents)
	private, _ := startPrivate(t)
	every := []string{"code-review", "k8s-deploy", "release-notes", "support-triage", "windows-notes"}
	for _, tc := range []struct {
		name, page, base string
		whole            []string
		private          bool
	}{
		{"public", public.URL + "/ui/skills/k8s-deploy", public.URL, every, false},
		{"path token", private.URL + "/t/" + fixture.TeamSecret + "/ui/skills/k8s-deploy", private.URL + "/t/" + fixture.TeamSecret, []string{"code-review", "k8s-deploy"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := pageLines(t, tc.page)
			var cli []string
			var curlLine, netclaw string
			for _, l := range lines {
				switch {
				case strings.Contains(l, " -- skills add "):
					cli = append(cli, l)
				case strings.HasPrefix(l, "curl "):
					curlLine = l
				case strings.HasPrefix(l, "{"):
					netclaw = l
				}
			}
			if len(cli) != 2 || curlLine == "" || netclaw == "" {
				t.Fatalf("install lines %q: want two skills CLI lines, curl and netclaw", lines)
			}
			for i, want := range [][]string{{"k8s-deploy"}, tc.whole} {
				env, args := pastedCLI(t, cli[i], tc.private)
				dir := t.TempDir()
				out, _, err := skillsCLIEnv(t, npx, dir, env, append(args, "-y", "-a", "universal", "--skill", "*")...)
				if err != nil {
					t.Fatalf("%s: %v\n%s", cli[i], err, out)
				}
				if got, err := installedNames(filepath.Join(dir, ".agents", "skills")); err != nil || !slices.Equal(got, want) {
					t.Errorf("%s installed %v (%v), want %v\n%s", cli[i], got, err, want, out)
				}
			}

			// curl, as pasted into a shell.
			dir := t.TempDir()
			cmd := exec.CommandContext(t.Context(), "sh", "-c", curlLine)
			cmd.Dir, cmd.Env = dir, append(os.Environ(), "PATH="+filepath.Dir(curl)+":"+os.Getenv("PATH"))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", curlLine, err, out)
			}
			zip, err := os.ReadFile(filepath.Join(dir, "k8s-deploy-1.2.0.zip"))
			if err != nil {
				t.Fatal(err)
			}
			idx := fixture.GetIndex(t, tc.base, "")
			found := false
			for _, s := range idx.Skills {
				if s.Name == "k8s-deploy" {
					found = true
					if fixture.SHA(zip) != s.Digest {
						t.Errorf("curl saved %d bytes hashing to %s, the index says %s", len(zip), fixture.SHA(zip), s.Digest)
					}
				}
			}
			if !found {
				t.Fatal("the RFC index lists no k8s-deploy")
			}

			// netclaw's entry: valid JSON whose feed answers with its key.
			var cfg struct {
				SkillFeeds struct {
					Feeds []struct{ Name, URL, APIKey string } `json:"Feeds"`
				} `json:"SkillFeeds"`
			}
			if err := json.Unmarshal([]byte(netclaw), &cfg); err != nil || len(cfg.SkillFeeds.Feeds) != 1 {
				t.Fatalf("netclaw entry %q: %v", netclaw, err)
			}
			f := cfg.SkillFeeds.Feeds[0]
			if strings.Contains(f.URL, "/t/") || (tc.private && f.APIKey == "") {
				t.Errorf("netclaw entry %+v: want the bare base URL and, on a private feed, the key", f)
			}
			auth := ""
			if f.APIKey != "" {
				auth = "Bearer " + f.APIKey
			}
			for _, p := range []string{"/.well-known/agent-skills/index.json", "/subagents/v1/index.json"} {
				if resp, body := fixture.Fetch(t, http.MethodGet, f.URL+p, auth, ""); resp.StatusCode != http.StatusOK || !bytes.HasPrefix(body, []byte("{")) {
					t.Errorf("netclaw would read %s%s: %d", f.URL, p, resp.StatusCode)
				}
			}
		})
	}
}

// pastedCLI splits a skills CLI line of a page into the environment it
// sets and the CLI's arguments; the test runs the pinned CLI with them,
// and fails for a line that runs another release.
func pastedCLI(t *testing.T, line string, private bool) (env, args []string) {
	t.Helper()
	fields := strings.Fields(line)
	for len(fields) > 0 && strings.Contains(fields[0], "=") {
		env, fields = append(env, fields[0]), fields[1:]
	}
	if off := slices.Contains(env, "DISABLE_TELEMETRY=1"); off != private {
		t.Errorf("%q switches telemetry off: %v, want %v (a private feed's URLs carry the token)", line, off, private)
	}
	// The page pins the Node and CLI releases the suite runs.
	pin := []string{"npx", "-y", "-p", skillsCLINode, "-p", skillsCLIPkg, "--", "skills"}
	if len(fields) <= len(pin) || !slices.Equal(fields[:len(pin)], pin) {
		t.Fatalf("%q is not a pinned skills CLI line (%s ...)", line, strings.Join(pin, " "))
	}
	return env, fields[len(pin):]
}
