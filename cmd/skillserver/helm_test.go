package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
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
// program (run(), in-process). It needs helm, so it only runs when asked:
//
//	SKILLSERVER_HELM_TEST=1 go test -run Helm ./cmd/skillserver/
//
// .ci/run builds helm from its Go module and sets SKILLSERVER_HELM_TEST=1.

const (
	helmModule = "helm.sh/helm/v3/cmd/helm@v3.22.0"
	helmChart  = "../../deploy/helm/skillserver"
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

// The parts of the rendered objects the tests read.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name        string            `yaml:"name"`
		Labels      map[string]string `yaml:"labels"`
		Annotations map[string]string `yaml:"annotations"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		// Deployment
		Replicas int `yaml:"replicas"`
		Template struct {
			Metadata struct {
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"metadata"`
			Spec k8sPodSpec `yaml:"spec"`
		} `yaml:"template"`
		// Deployment, Service, PodDisruptionBudget, ServiceMonitor
		Selector map[string]any `yaml:"selector"`
		// Service
		Type  string `yaml:"type"`
		Ports []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort any    `yaml:"targetPort"`
		} `yaml:"ports"`
		// ServiceMonitor
		JobLabel  string `yaml:"jobLabel"`
		Endpoints []struct {
			Port string `yaml:"port"`
			Path string `yaml:"path"`
		} `yaml:"endpoints"`
	} `yaml:"spec"`
}

type k8sPodSpec struct {
	AutomountServiceAccountToken *bool `yaml:"automountServiceAccountToken"`
	SecurityContext              struct {
		RunAsNonRoot   *bool  `yaml:"runAsNonRoot"`
		FSGroup        *int64 `yaml:"fsGroup"`
		SeccompProfile struct {
			Type string `yaml:"type"`
		} `yaml:"seccompProfile"`
	} `yaml:"securityContext"`
	Volumes        []k8sVolume    `yaml:"volumes"`
	InitContainers []k8sContainer `yaml:"initContainers"`
	Containers     []k8sContainer `yaml:"containers"`
}

type k8sVolume struct {
	Name      string         `yaml:"name"`
	EmptyDir  map[string]any `yaml:"emptyDir"`
	ConfigMap *struct {
		Name  string       `yaml:"name"`
		Items []k8sKeyPath `yaml:"items"`
	} `yaml:"configMap"`
	Secret *struct {
		SecretName  string       `yaml:"secretName"`
		DefaultMode *int         `yaml:"defaultMode"`
		Items       []k8sKeyPath `yaml:"items"`
	} `yaml:"secret"`
}

type k8sKeyPath struct {
	Key  string `yaml:"key"`
	Path string `yaml:"path"`
}

type k8sContainer struct {
	Name  string   `yaml:"name"`
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Env   []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct {
				Name     string `yaml:"name"`
				Key      string `yaml:"key"`
				Optional bool   `yaml:"optional"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
		SubPath   string `yaml:"subPath"`
	} `yaml:"volumeMounts"`
	ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
	LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
	Resources      struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	SecurityContext struct {
		RunAsUser                *int64 `yaml:"runAsUser"`
		AllowPrivilegeEscalation *bool  `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   *bool  `yaml:"readOnlyRootFilesystem"`
		Capabilities             struct {
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
}

type k8sProbe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port any    `yaml:"port"`
	} `yaml:"httpGet"`
}

// rendered is the output of `helm template`, by kind and name.
type rendered map[string]*k8sObject

func (r rendered) get(t *testing.T, kind, name string) *k8sObject {
	t.Helper()
	o, ok := r[kind+"/"+name]
	if !ok {
		t.Fatalf("helm template rendered no %s %s; it rendered %v", kind, name, r.names())
	}
	return o
}

func (r rendered) names() []string {
	var names []string
	for k := range r {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// helmTemplate renders the chart as release "skillserver" with the values
// files and --set arguments in args, and decodes every object.
func helmTemplate(t *testing.T, helm string, args ...string) rendered {
	t.Helper()
	out := helmRun(t, helm, append([]string{"template", "skillserver", helmChart, "--namespace", "skills"}, args...)...)
	objs := rendered{}
	dec := yaml.NewDecoder(strings.NewReader(out))
	for {
		var o k8sObject
		err := dec.Decode(&o)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("helm template output is not YAML: %v\n%s", err, out)
		}
		if o.Kind == "" {
			continue // an empty document
		}
		key := o.Kind + "/" + o.Metadata.Name
		if _, dup := objs[key]; dup {
			t.Fatalf("helm template rendered %s twice", key)
		}
		objs[key] = &o
	}
	return objs
}

func podContainer(t *testing.T, pod *k8sPodSpec, name string) *k8sContainer {
	t.Helper()
	for i := range pod.Containers {
		if pod.Containers[i].Name == name {
			return &pod.Containers[i]
		}
	}
	t.Fatalf("the pod has no container %s", name)
	return nil
}

func (c *k8sContainer) port(t *testing.T, name string) int {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Fatalf("container %s has no port named %s", c.Name, name)
	return 0
}

func (c *k8sContainer) env(name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// checkHardening checks what deploy/kubernetes.yaml holds every pod to:
// no service account token, non-root, the runtime's seccomp profile, and
// in every container a read-only root file system, no privilege
// escalation and every capability dropped; skillserver as the image's
// uid 65532 with the probes on /healthz and /readyz and a memory limit,
// the checkout mounted read-only.
func checkHardening(t *testing.T, pod *k8sPodSpec) {
	t.Helper()
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("automountServiceAccountToken is not false")
	}
	sc := pod.SecurityContext
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("the pod's runAsNonRoot is not true")
	}
	if sc.SeccompProfile.Type != "RuntimeDefault" {
		t.Errorf("the pod's seccompProfile is %q, want RuntimeDefault", sc.SeccompProfile.Type)
	}
	if sc.FSGroup == nil || *sc.FSGroup != 65533 {
		t.Errorf("the pod's fsGroup is %v, want 65533 (git-sync's group, which writes the emptyDir)", sc.FSGroup)
	}
	all := slices.Concat(pod.InitContainers, pod.Containers)
	if len(all) != 3 {
		t.Errorf("the pod has %d containers, want git-sync-init, git-sync and skillserver", len(all))
	}
	for _, c := range all {
		s := c.SecurityContext
		if s.RunAsUser == nil || *s.RunAsUser == 0 {
			t.Errorf("container %s: runAsUser %v, want a non-root uid", c.Name, s.RunAsUser)
		}
		if s.ReadOnlyRootFilesystem == nil || !*s.ReadOnlyRootFilesystem {
			t.Errorf("container %s: readOnlyRootFilesystem is not true", c.Name)
		}
		if s.AllowPrivilegeEscalation == nil || *s.AllowPrivilegeEscalation {
			t.Errorf("container %s: allowPrivilegeEscalation is not false", c.Name)
		}
		if !slices.Equal(s.Capabilities.Drop, []string{"ALL"}) {
			t.Errorf("container %s: capabilities.drop is %v, want [ALL]", c.Name, s.Capabilities.Drop)
		}
		if c.Resources.Limits["memory"] == "" || c.Resources.Requests["memory"] == "" {
			t.Errorf("container %s: no memory request or limit: %+v", c.Name, c.Resources)
		}
	}
	ss := podContainer(t, pod, "skillserver")
	if ss.SecurityContext.RunAsUser == nil || *ss.SecurityContext.RunAsUser != 65532 {
		t.Errorf("skillserver runs as %v, want 65532 (the image's user)", ss.SecurityContext.RunAsUser)
	}
	for _, p := range []struct {
		what  string
		probe *k8sProbe
		path  string
	}{{"readinessProbe", ss.ReadinessProbe, "/readyz"}, {"livenessProbe", ss.LivenessProbe, "/healthz"}} {
		switch {
		case p.probe == nil || p.probe.HTTPGet == nil:
			t.Errorf("skillserver has no %s httpGet, want GET %s on port http", p.what, p.path)
		case p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port != "http":
			t.Errorf("skillserver's %s is GET %s on port %v, want GET %s on port http", p.what, p.probe.HTTPGet.Path, p.probe.HTTPGet.Port, p.path)
		}
	}
	for _, m := range ss.VolumeMounts {
		if !m.ReadOnly {
			t.Errorf("skillserver mounts %s (%s) writable", m.Name, m.MountPath)
		}
		if m.SubPath != "" {
			t.Errorf("skillserver mounts %s with subPath, which the kubelet never updates", m.Name)
		}
	}
	for _, c := range pod.InitContainers {
		if c.Name == "git-sync-init" && !slices.Contains(c.Args, "--one-time") {
			t.Errorf("git-sync-init runs without --one-time: %v", c.Args)
		}
	}
	gs := podContainer(t, pod, "git-sync")
	for _, want := range []string{"--root=/git", "--link=current", "--max-failures=-1"} {
		if !slices.Contains(gs.Args, want) {
			t.Errorf("git-sync's args %v lack %s", gs.Args, want)
		}
	}
}

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
		src := fixture.CopyTree(t, filepath.Join("../../testdata", tree))
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
	return startServerEnv(t, pr.env, pr.args...)
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
	var errOut fixture.SyncBuffer
	code := run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0"}, pr.args...), func(k string) string { return pr.env[k] }, io.Discard, &errOut)
	if code != exitUsage || !strings.Contains(errOut.String(), "retention_max_byte") {
		t.Errorf("serve with a misspelled config key: exit %d, stderr %q; want %d naming the key", code, errOut.String(), exitUsage)
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
	manifest, err := os.ReadFile("../../deploy/kubernetes.yaml")
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
