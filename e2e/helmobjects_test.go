//go:build e2e

package e2e

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

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
	stateMounted := false
	for _, m := range ss.VolumeMounts {
		if m.MountPath == stateMount {
			stateMounted = true // the one folder it writes: its state_dir
		} else if !m.ReadOnly {
			t.Errorf("skillserver mounts %s (%s) writable", m.Name, m.MountPath)
		}
		if m.SubPath != "" {
			t.Errorf("skillserver mounts %s with subPath, which the kubelet never updates", m.Name)
		}
	}
	if !stateMounted {
		t.Errorf("skillserver mounts nothing at %s: its state_dir would be memory", stateMount)
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
