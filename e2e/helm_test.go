//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/skillserver/skillserver/internal/fixture"
)

// The Helm chart in deploy/helm/skillserver, rendered by a real helm and
// checked two ways: the hardening and wiring of the objects, and the
// skillserver container's args and env, run as they are against the real
// program (the built binary, as a process). It needs helm, so it only runs when asked:
//
//	SKILLSERVER_HELM_TEST=1 go test -run Helm ./e2e/
//
// .ci/run builds helm from its Go module and sets SKILLSERVER_HELM_TEST=1.

const (
	helmModule = "helm.sh/helm/v3/cmd/helm@v3.22.0"
	helmChart  = "../deploy/helm/skillserver"
)

func requireHelm(t *testing.T) string {
	t.Helper()
	if os.Getenv("SKILLSERVER_HELM_TEST") != "1" {
		t.Skip("renders deploy/helm/skillserver with a real helm; enable with SKILLSERVER_HELM_TEST=1 after `GOBIN=/usr/local/bin go install " + helmModule + "` (.ci/run does both)")
	}
	bin, err := exec.LookPath("helm")
	if err != nil {
		t.Fatalf("SKILLSERVER_HELM_TEST=1 but helm is not on PATH; install it with `GOBIN=/usr/local/bin go install %s`: %v", helmModule, err)
	}
	return bin
}

// helmRun runs helm with args, its cache, config and data homes in a
// temporary folder and no cluster, and returns its stdout; it fails the
// test unless helm exits 0.
func helmRun(t *testing.T, helm string, args ...string) string {
	t.Helper()
	out, errOut, err := helmExec(t, helm, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

func helmExec(t *testing.T, helm string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, helm, args...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"), "KUBECONFIG="+filepath.Join(home, "no-kubeconfig"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return out.String(), errOut.String(), err
}

var testdataSkills = []string{"code-review", "k8s-deploy", "release-notes", "support-triage", "windows-notes"}

// TestHelmLint: `helm lint --strict` passes on the chart, with its
// defaults and with the values of TestHelmPrivateFeed.
func TestHelmLint(t *testing.T) {
	helm := requireHelm(t)
	helmRun(t, helm, "lint", "--strict", helmChart)
	helmRun(t, helm, "lint", "--strict", helmChart, "-f", writeHelmValues(t, privateValues))
}

// TestHelmDefaults renders the chart with its default values, checks the
// objects and the hardening, and runs the skillserver container's args
// and env: the server serves the checkout through git-sync's current
// symlink, follows a flip of it, and serves /metrics on its own port.
func TestHelmDefaults(t *testing.T) {
	helm := requireHelm(t)
	objs := helmTemplate(t, helm)
	want := []string{"ConfigMap/skillserver", "Deployment/skillserver", "PodDisruptionBudget/skillserver", "Service/skillserver", "Service/skillserver-metrics"}
	if got := objs.names(); !slices.Equal(got, want) {
		t.Errorf("rendered %v, want %v", got, want)
	}
	dep := objs.get(t, "Deployment", "skillserver")
	pod := &dep.Spec.Template.Spec
	checkHardening(t, pod)
	if dep.Spec.Replicas != 3 {
		t.Errorf("replicas %d, want 3", dep.Spec.Replicas)
	}
	ss := podContainer(t, pod, "skillserver")
	if ss.Image != "registry.example.com/skillserver:"+chartAppVersion(t) {
		t.Errorf("image %s, want the chart's appVersion as tag", ss.Image)
	}
	svc := objs.get(t, "Service", "skillserver")
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "http" || svc.Spec.Ports[0].TargetPort != "http" {
		t.Errorf("the Service's ports are %+v, want http only", svc.Spec.Ports)
	}
	msvc := objs.get(t, "Service", "skillserver-metrics")
	if msvc.Spec.Type != "ClusterIP" || len(msvc.Spec.Ports) != 1 || msvc.Spec.Ports[0].Port != ss.port(t, "metrics") {
		t.Errorf("the metrics Service is %s %+v, want ClusterIP on the metrics port", msvc.Spec.Type, msvc.Spec.Ports)
	}
	for k, v := range svc.Spec.Selector {
		if dep.Spec.Template.Metadata.Labels[k] != v {
			t.Errorf("the Service selects %s=%v, which the pods do not carry", k, v)
		}
	}
	if _, ok := ss.env("SKILLSERVER_READ_TOKENS_FILE"); ok {
		t.Error("the default values make a private feed")
	}
	if _, ok := ss.env("SKILLSERVER_ADMIN_TOKEN"); ok {
		t.Error("the default values set an admin token")
	}

	pr := layOut(t, objs)
	ts := pr.start(t)
	for _, p := range []string{"/readyz", "/healthz"} {
		if resp, body := ts.Get(t, p); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d %s", p, resp.StatusCode, body)
		}
	}
	if code, names := feedNames(t, ts.URL, nil); code != http.StatusOK || !slices.Equal(names, testdataSkills) {
		t.Errorf("the RFC index: %d %v, want 200 %v", code, names, testdataSkills)
	}
	if resp, body := ts.Get(t, "http://"+pr.metrics+"/metrics"); resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "skillserver_snapshot_skills 5") {
		t.Errorf("GET /metrics on the metrics port: %d %.200s", resp.StatusCode, body)
	}
	if resp, _ := ts.Get(t, "/metrics"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /metrics on the http port: %d, want 404 (metrics_listen moves it)", resp.StatusCode)
	}
	// git-sync publishes the next commit: a new worktree, current flipped.
	gitSyncWorktree(t, pr.repo, "b2", map[string]string{"skills/helm-flip/SKILL.md": fixture.SkillMD("helm-flip")})
	fixture.Eventually(t, 10*time.Second, "the server follows git-sync's flip of current", func() error {
		if _, names := feedNames(t, ts.URL, nil); !slices.Contains(names, "helm-flip") {
			return fmt.Errorf("the RFC index lists %v", names)
		}
		return nil
	})
}

// TestHelmExistingSecrets: existingSecret and existingSecretKey point the
// mount and the env at Secrets the chart does not make; metrics.port 0
// leaves /metrics on the main listener, with no metrics port or Service.
func TestHelmExistingSecrets(t *testing.T) {
	helm := requireHelm(t)
	objs := helmTemplate(t, helm, "--set", "readTokens.existingSecret=feed-tokens,readTokens.existingSecretKey=lines",
		"--set", "adminToken.existingSecret=ops,adminToken.existingSecretKey=reload", "--set", "metrics.port=0")
	for _, name := range objs.names() {
		if strings.HasPrefix(name, "Secret/") || strings.Contains(name, "metrics") {
			t.Errorf("rendered %s", name)
		}
	}
	pod := &objs.get(t, "Deployment", "skillserver").Spec.Template.Spec
	ss := podContainer(t, pod, "skillserver")
	if _, ok := ss.env("SKILLSERVER_METRICS_LISTEN"); ok || len(ss.Ports) != 1 {
		t.Errorf("metrics.port=0 still sets metrics_listen or a port: %+v", ss.Ports)
	}
	found := false
	for _, v := range pod.Volumes {
		if v.Secret != nil {
			found = true
			if v.Secret.SecretName != "feed-tokens" || !slices.Equal(v.Secret.Items, []k8sKeyPath{{"lines", "tokens"}}) {
				t.Errorf("the tokens volume is %+v, want Secret feed-tokens, key lines as tokens", v.Secret)
			}
		}
	}
	if !found {
		t.Error("no Secret volume for readTokens.existingSecret")
	}
	for _, e := range ss.Env {
		if e.Name == "SKILLSERVER_ADMIN_TOKEN" {
			if r := e.ValueFrom.SecretKeyRef; r.Name != "ops" || r.Key != "reload" {
				t.Errorf("SKILLSERVER_ADMIN_TOKEN from %+v, want Secret ops, key reload", r)
			}
			return
		}
	}
	t.Error("no SKILLSERVER_ADMIN_TOKEN for adminToken.existingSecret")
}

// TestHelmConfigKeysAreTheServers: a key of the config values the server
// does not know stops it at start, so values naming a key that was
// renamed or removed fail TestHelmDefaults and TestHelmPrivateFeed
// rather than a rollout.
func TestHelmConfigKeysAreTheServers(t *testing.T) {
	helm := requireHelm(t)
	pr := layOut(t, helmTemplate(t, helm, "--set", "config.retention_max_byte=1"))
	// Bounded: were the key accepted, serve would run until cancelled.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, skillserverBin(), append([]string{"serve", "--listen", "127.0.0.1:0"}, pr.args...)...)
	cmd.Env = processEnv(pr.env)
	code, _, errOut := execBinary(t, cmd)
	if code != exitUsage || !strings.Contains(errOut, "retention_max_byte") {
		t.Errorf("serve with a misspelled config key: exit %d, stderr %q; want %d naming the key", code, errOut, exitUsage)
	}
}

// chartAppVersion is the appVersion of deploy/helm/skillserver/Chart.yaml.
func chartAppVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(helmChart, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		AppVersion string `yaml:"appVersion"`
	}
	if err := yaml.Unmarshal(b, &chart); err != nil {
		t.Fatalf("Chart.yaml: %v", err)
	}
	return chart.AppVersion
}

// TestHelmChartAppVersion: the chart's appVersion, the image tag it
// deploys by default, is the release the repository names: the
// skillserver image tag of deploy/kubernetes.yaml (which
// TestKubernetesExampleNamesARelease ties to CHANGELOG.md). Not the
// VERSION file: that is the release being prepared, whose image does not
// exist until it is tagged (TestVersionFileIsTheNextRelease). It needs no
// helm.
func TestHelmChartAppVersion(t *testing.T) {
	app := chartAppVersion(t)
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(app) {
		t.Fatalf("Chart.yaml appVersion %q is not vMAJOR.MINOR.PATCH, the image tags `make docker` gives", app)
	}
	manifest, err := os.ReadFile("../deploy/kubernetes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*image: \S+/skillserver:(\S+)`).FindSubmatch(manifest)
	if m == nil {
		t.Fatal("deploy/kubernetes.yaml runs no skillserver image")
	}
	if string(m[1]) != app {
		t.Errorf("Chart.yaml appVersion %s, but deploy/kubernetes.yaml runs %s", app, m[1])
	}
}
