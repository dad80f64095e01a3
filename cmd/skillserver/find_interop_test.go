package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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
	idx := ts.index(t)
	for _, s := range idx.Skills {
		if s.Name == "k8s-deploy" {
			checkInstalled(t, skillsRoot, filepath.Join(dir, ".agents", "skills", "k8s-deploy"), s.Name, s.Version)
		}
	}

	resp, body := ts.get(t, feed.PathFind+"?q=k8s-deploy")
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
	_, body = ts.get(t, feed.PathFind+"?q=")
	t.Logf("after one `skills add --skill k8s-deploy`: %s", body)
	_, out, err = skillsCLIEnv(t, npx, t.TempDir(), env, "find", "k8s-deploy")
	if err != nil || !strings.Contains(out, ts.URL+"@k8s-deploy") {
		t.Errorf("second skills find: %v\n%s", err, out)
	}
	t.Logf("skills find k8s-deploy after one install:\n%s", out)
}
