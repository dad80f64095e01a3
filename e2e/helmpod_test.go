//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/fixture"
)

// stateMount is where the chart mounts skillserver's state_dir: the
// image's XDG_STATE_HOME (/var/lib) plus skillserver.
const stateMount = "/var/lib/skillserver"

// podRun is the skillserver container of a rendered chart laid out on
// this machine: each volume it mounts is a temporary folder holding what
// the kubelet would put there, the repo emptyDir as git-sync leaves it
// (testdata's skills and agents in a worktree, current a symlink to it).
type podRun struct {
	env      map[string]string // the container's env, paths mapped
	args     []string          // its args after "serve"
	repo     string            // the folder standing for the repo volume
	mounts   map[string]string // mountPath -> local folder
	metrics  string            // the metrics address the test listens on, or ""
	replaced []string          // what was changed, for the log
}

// layOut builds a podRun from the Deployment objs renders: secrets'
// values are the rendered Secrets' (made from the test's values), and
// every env value under a mount path is mapped to its local folder.
// startServerEnv then adds "serve --listen 127.0.0.1:0 --log-format
// json": the flag beats SKILLSERVER_LISTEN, and metrics_listen is
// replaced by a free loopback port; nothing else is changed.
func layOut(t *testing.T, objs rendered) *podRun {
	t.Helper()
	pod := &objs.get(t, "Deployment", "skillserver").Spec.Template.Spec
	ss := podContainer(t, pod, "skillserver")
	if len(ss.Args) == 0 || ss.Args[0] != "serve" {
		t.Fatalf("skillserver's args are %q, want serve first", ss.Args)
	}
	pr := &podRun{env: map[string]string{}, args: ss.Args[1:], mounts: map[string]string{}}
	secret := func(name, key string) (string, bool) {
		s, ok := objs["Secret/"+name]
		if !ok {
			return "", false
		}
		b, err := base64.StdEncoding.DecodeString(s.Data[key])
		if err != nil {
			t.Fatalf("Secret %s, key %s: %v", name, key, err)
		}
		return string(b), true
	}
	for _, m := range ss.VolumeMounts {
		dir := t.TempDir()
		pr.mounts[m.MountPath] = dir
		i := slices.IndexFunc(pod.Volumes, func(v k8sVolume) bool {
			return v.Name == m.Name
		})
		if i < 0 {
			t.Fatalf("skillserver mounts %s, which is no volume of the pod", m.Name)
		}
		v := pod.Volumes[i]
		switch {
		case v.EmptyDir != nil && m.MountPath == "/git":
			pr.repo = dir
			gitSyncWorktree(t, dir, "a1", nil)
		case v.EmptyDir != nil && m.MountPath == stateMount:
			// Empty, under the folder standing for the image's
			// XDG_STATE_HOME (/var/lib), which state_dir "auto" uses.
			lib := t.TempDir()
			dir = filepath.Join(lib, filepath.Base(stateMount))
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			pr.mounts[m.MountPath] = dir
			pr.env["XDG_STATE_HOME"] = lib
			pr.replaced = append(pr.replaced, "XDG_STATE_HOME (the image's /var/lib) by "+lib)
		case v.ConfigMap != nil:
			cm := objs.get(t, "ConfigMap", v.ConfigMap.Name)
			if len(v.ConfigMap.Items) > 0 {
				t.Fatalf("configMap volume %s: items are not laid out by this test", v.Name)
			}
			for k, data := range cm.Data {
				fixture.WriteFile(t, filepath.Join(dir, k), data, 0o444)
			}
		case v.Secret != nil:
			mode := os.FileMode(0o644)
			if v.Secret.DefaultMode != nil {
				mode = os.FileMode(*v.Secret.DefaultMode)
			}
			for _, it := range v.Secret.Items {
				data, ok := secret(v.Secret.SecretName, it.Key)
				if !ok {
					t.Fatalf("secret volume %s: the chart rendered no Secret %s", v.Name, v.Secret.SecretName)
				}
				fixture.WriteFile(t, filepath.Join(dir, it.Path), data, mode)
			}
		default:
			t.Fatalf("volume %s mounted at %s: not laid out by this test", v.Name, m.MountPath)
		}
	}
	for _, e := range ss.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			val, ok := secret(ref.Name, ref.Key)
			if !ok && !ref.Optional {
				t.Fatalf("env %s: the chart rendered no Secret %s", e.Name, ref.Name)
			}
			pr.env[e.Name] = val
		case e.ValueFrom != nil:
			t.Fatalf("env %s: valueFrom other than secretKeyRef is not resolved by this test", e.Name)
		default:
			pr.env[e.Name] = pr.mapPath(e.Value)
		}
	}
	if v, ok := pr.env["SKILLSERVER_METRICS_LISTEN"]; ok {
		if want := fmt.Sprintf(":%d", ss.port(t, "metrics")); v != want {
			t.Errorf("SKILLSERVER_METRICS_LISTEN is %q, but the metrics port is %s", v, want)
		}
		pr.metrics = fixture.FreePort(t)
		pr.env["SKILLSERVER_METRICS_LISTEN"] = pr.metrics
		pr.replaced = append(pr.replaced, "SKILLSERVER_METRICS_LISTEN="+pr.metrics)
	}
	if v := pr.env["SKILLSERVER_LISTEN"]; v != fmt.Sprintf(":%d", ss.port(t, "http")) {
		t.Errorf("SKILLSERVER_LISTEN is %q, but the http port is %d", v, ss.port(t, "http"))
	}
	pr.replaced = append(pr.replaced, "SKILLSERVER_LISTEN by --listen 127.0.0.1:0")
	return pr
}

// mapPath maps a path under one of the container's mounts to the local
// folder standing for it.
func (pr *podRun) mapPath(v string) string {
	for mount, dir := range pr.mounts {
		if rest, ok := strings.CutPrefix(v, mount+"/"); ok {
			pr.replaced = append(pr.replaced, v+" -> "+filepath.Join(dir, rest))
			return filepath.Join(dir, rest)
		}
	}
	return v
}

// gitSyncWorktree lays out a commit as git-sync does under its --root: a
// worktree .worktrees/<hash> holding testdata's skills and agents plus
// extra (path -> content), and the link current flipped to it by a
// rename, as git-sync publishes a commit.
func gitSyncWorktree(t *testing.T, root, hash string, extra map[string]string) {
	t.Helper()
	wt := filepath.Join(root, ".worktrees", hash)
	for _, tree := range []string{"skills", "agents"} {
		src := fixture.CopyTree(t, filepath.Join("../testdata", tree))
		if err := os.MkdirAll(wt, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(src, filepath.Join(wt, tree)); err != nil {
			t.Fatal(err)
		}
	}
	for p, data := range extra {
		fixture.WriteFile(t, filepath.Join(wt, p), data, 0o644)
	}
	tmp := filepath.Join(root, "current.tmp")
	fixture.Symlink(t, filepath.Join(".worktrees", hash), tmp)
	if err := os.Rename(tmp, filepath.Join(root, "current")); err != nil {
		t.Fatal(err)
	}
}

// start runs the real program with the container's args and env.
func (pr *podRun) start(t *testing.T) *testServer {
	t.Helper()
	t.Logf("running serve %q with the rendered env; replaced: %s", pr.args, strings.Join(pr.replaced, "; "))
	ts := startServerEnv(t, pr.env, pr.args...)
	// The bytes go to the state volume, not to memory.
	if dir := pr.mounts[stateMount]; dir != "" && !strings.Contains(ts.Logged(t), `"msg":"state directory","path":"`+dir+"/") {
		t.Errorf("the server does not keep its state_dir in the chart's volume (%s):\n%s", dir, ts.Logged(t))
	}
	return ts
}

// feedNames GETs the RFC index with header h and returns its skill names.
func feedNames(t *testing.T, url string, h http.Header) (int, []string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/.well-known/agent-skills/index.json", nil)
	maps.Copy(req.Header, h)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var index struct {
		Skills []struct {
			Name string `json:"name"`
		} `json:"skills"`
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(&index); err != nil {
		t.Fatalf("the RFC index: %v", err)
	}
	var names []string
	for _, s := range index.Skills {
		names = append(names, s.Name)
	}
	return resp.StatusCode, names
}

// privateValues turns on read tokens, the admin Secret, another metrics
// port, the ServiceMonitor and the scrape annotations.
const privateValues = `
git:
  repo: https://git.example.com/team/skills
config:
  base_url: https://skills.example.com
  log_format: json
  rescan_interval: 5m
  shutdown_delay: 5s
  retention_max_bytes: 67108864
  max_search_results: 50
readTokens:
  lines: |
    # NAME  SECRET                              PATTERNS
    ci      helm-test-read-token-ci-0123456789  *
    team-a  helm-test-read-token-team-a-012345  code-*
adminToken:
  value: helm-test-admin-token-0123456789
metrics:
  port: 9091
  serviceMonitor:
    enabled: true
    labels:
      release: prometheus
  podAnnotations: true
`

func writeHelmValues(t *testing.T, values string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "values.yaml")
	fixture.WriteFile(t, p, values, 0o644)
	return p
}

// TestHelmPrivateFeed renders the chart with read tokens, an admin token
// and metrics on, checks the Secrets, their mounts and the ServiceMonitor,
// and runs the rendered container: no token is 401, a token reads the
// feed (a scoped one its part), the admin token reloads, and /metrics
// on its port needs no token.
func TestHelmPrivateFeed(t *testing.T) {
	helm := requireHelm(t)
	objs := helmTemplate(t, helm, "-f", writeHelmValues(t, privateValues))
	pod := &objs.get(t, "Deployment", "skillserver").Spec.Template.Spec
	checkHardening(t, pod)
	objs.get(t, "Secret", "skillserver-read-tokens")
	objs.get(t, "Secret", "skillserver-admin")
	sm := objs.get(t, "ServiceMonitor", "skillserver")
	if sm.Spec.JobLabel != "app.kubernetes.io/name" || len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" || sm.Metadata.Labels["release"] != "prometheus" {
		t.Errorf("ServiceMonitor: %+v", sm)
	}
	msvc := objs.get(t, "Service", "skillserver-metrics")
	if msvc.Metadata.Labels["app.kubernetes.io/name"] != "skillserver" {
		t.Errorf("the metrics Service's app.kubernetes.io/name (the job label) is %q, want skillserver (deploy/prometheus-rules.yaml selects job=\"skillserver\")", msvc.Metadata.Labels["app.kubernetes.io/name"])
	}
	for k, v := range sm.Spec.Selector["matchLabels"].(map[string]any) {
		if msvc.Metadata.Labels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%v, which the metrics Service does not carry", k, v)
		}
	}
	ann := objs.get(t, "Deployment", "skillserver").Spec.Template.Metadata.Annotations
	if ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/port"] != "9091" || ann["prometheus.io/path"] != "/metrics" {
		t.Errorf("pod annotations %v, want prometheus.io/scrape, port 9091, path /metrics", ann)
	}

	pr := layOut(t, objs)
	tokensFile := pr.env["SKILLSERVER_READ_TOKENS_FILE"]
	if b, err := os.ReadFile(tokensFile); err != nil || !strings.Contains(string(b), "team-a  helm-test-read-token-team-a-012345  code-*") {
		t.Fatalf("the read tokens file %s as mounted: %q, %v", tokensFile, b, err)
	}
	const admin = "helm-test-admin-token-0123456789"
	if pr.env["SKILLSERVER_ADMIN_TOKEN"] != admin {
		t.Fatalf("SKILLSERVER_ADMIN_TOKEN resolves to %q, want the values file's", pr.env["SKILLSERVER_ADMIN_TOKEN"])
	}
	ts := pr.start(t)
	for _, p := range []string{"/readyz", "/healthz"} {
		if resp, body := ts.Get(t, p); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s without a token: %d %s, want 200 (the probes send none)", p, resp.StatusCode, body)
		}
	}
	if code, _ := feedNames(t, ts.URL, nil); code != http.StatusUnauthorized {
		t.Errorf("the RFC index without a token: %d, want 401", code)
	}
	bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
	if code, names := feedNames(t, ts.URL, bearer("helm-test-read-token-ci-0123456789")); code != http.StatusOK || !slices.Equal(names, testdataSkills) {
		t.Errorf("the RFC index with the ci token: %d %v, want 200 %v", code, names, testdataSkills)
	}
	if code, names := feedNames(t, ts.URL, bearer("helm-test-read-token-team-a-012345")); code != http.StatusOK || !slices.Equal(names, []string{"code-review"}) {
		t.Errorf("the RFC index with the scoped token: %d %v, want 200 [code-review]", code, names)
	}
	if resp, body := ts.Get(t, "http://"+pr.metrics+"/metrics"); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "skillserver_http_auth_refusals_total") {
		t.Errorf("GET /metrics on the metrics port without a token: %d %.200s", resp.StatusCode, body)
	}
	for _, tc := range []struct {
		tok  string
		code int
	}{{"", http.StatusUnauthorized}, {admin, http.StatusOK}} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL+"/-/reload", nil)
		if tc.tok != "" {
			req.Header.Set("Authorization", "Bearer "+tc.tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("POST /-/reload with token %q: %d, want %d", tc.tok, resp.StatusCode, tc.code)
		}
	}
	// A Secret update, as the kubelet makes it: the file is replaced.
	fixture.WriteFile(t, tokensFile+".new", "ci2 helm-test-read-token-ci2-012345678 *\n", 0o440)
	if err := os.Rename(tokensFile+".new", tokensFile); err != nil {
		t.Fatal(err)
	}
	fixture.Eventually(t, 10*time.Second, "the server re-reads the read tokens file", func() error {
		if code, _ := feedNames(t, ts.URL, bearer("helm-test-read-token-ci2-012345678")); code != http.StatusOK {
			return fmt.Errorf("the new token gets %d", code)
		}
		return nil
	})
}
