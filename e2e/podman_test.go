//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/fixture"
)

// podmanGlobal pins what podman would otherwise guess from the host: runc
// (the Debian package CI installs), cgroupfs and a file event log, which
// work as root with or without systemd.
var podmanGlobal = []string{"--runtime", "runc", "--cgroup-manager", "cgroupfs", "--events-backend", "file"}

// podmanRunFlags are the `podman run` flags every container of the test
// gets. Podman's default RLIMIT_NOFILE/NPROC (1048576) exceed the hard
// limits of CI's sandbox, where runc then fails with "error setting
// rlimits"; 1024 is plenty for the server. The rest is the hardening the
// operations guide recommends, so the test proves the image runs with it.
var podmanRunFlags = []string{
	"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
	"--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
}

type podman struct {
	t   *testing.T
	bin string
}

func requireContainerTest(t *testing.T) podman {
	t.Helper()
	if os.Getenv("SKILLSERVER_CONTAINER_TEST") != "1" {
		t.Skip("builds and runs the container image with podman; enable with SKILLSERVER_CONTAINER_TEST=1 (as root, with podman and runc installed; .ci/run does)")
	}
	for _, tool := range []string{"podman", "runc", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("SKILLSERVER_CONTAINER_TEST=1 but %s is not on PATH (apt-get install podman runc make): %v", tool, err)
		}
	}
	bin, _ := exec.LookPath("podman")
	return podman{t: t, bin: bin}
}

// run runs podman with args and returns its stdout; it fails the test on
// a non-zero exit.
func (p podman) run(args ...string) string {
	p.t.Helper()
	out, err := p.try(args...)
	if err != nil {
		p.t.Fatalf("podman %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// try runs podman with args and returns its stdout, or an error carrying
// stderr. Podman's own complaints on stderr (no systemd for healthcheck
// timers) do not count as failures: only the exit status does.
func (p podman) try(args ...string) (string, error) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, p.bin, append(append([]string{}, podmanGlobal...), args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &podmanError{err: err, stderr: stderr.String()}
	}
	return stdout.String(), nil
}

type podmanError struct {
	err    error
	stderr string
}

func (e *podmanError) Error() string { return e.err.Error() + ": " + strings.TrimSpace(e.stderr) }

func uniqueName(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}

// imageName is the name `make docker` gives the image by default
// (IMAGE=skillserver), as podman stores it.
const imageName = "localhost/skillserver"

// makeDocker runs `make docker` with podman and the given variables, and
// returns its output.
func (p podman) makeDocker(root string, vars ...string) (string, error) {
	ctx, cancel := context.WithTimeout(p.t.Context(), 15*time.Minute)
	defer cancel()
	args := append([]string{"-C", root, "docker", "DOCKER=" + p.bin + " " + strings.Join(podmanGlobal, " ")}, vars...)
	out, err := exec.CommandContext(ctx, "make", args...).CombinedOutput()
	return string(out), err
}

// buildImage runs `make docker` with podman, as the README says, with
// the default image name (which it replaces, and removes at cleanup), and
// returns the image (tagged :latest) and the version it was tagged with,
// `make version`'s.
func (p podman) buildImage() (image, version string) {
	t := p.t
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	v, err := exec.Command("make", "-s", "-C", root, "version").Output()
	if err != nil {
		t.Fatalf("make version: %v", err)
	}
	version = strings.TrimSpace(string(v))
	name := imageName
	// Removes what `make docker` makes: the lists, and every image it
	// built (a rebuild untags the one before; podman's --layers=false in
	// the Makefile leaves no intermediate images).
	built := map[string]bool{}
	record := func() {
		for _, arch := range imageArches {
			if id, err := p.try("image", "inspect", "--format", "{{.Id}}", name+":"+version+"-"+arch); err == nil {
				built[strings.TrimSpace(id)] = true
			}
		}
	}
	t.Cleanup(func() {
		for _, tag := range []string{"latest", version} {
			if _, err := p.try("manifest", "rm", name+":"+tag); err != nil {
				t.Logf("remove manifest list %s:%s: %v", name, tag, err)
			}
		}
		for id := range built {
			if _, err := p.try("rmi", "--force", id); err != nil {
				t.Logf("remove image %s: %v", id, err)
			}
		}
	})
	start := time.Now()
	out, err := p.makeDocker(root)
	record()
	if err != nil {
		t.Fatalf("make docker DOCKER=podman: %v\n%s", err, out)
	}
	t.Logf("make docker DOCKER=podman: %s", time.Since(start).Round(time.Second))

	if got := strings.TrimSpace(p.run("image", "inspect", "--format", `{{index .Config.Labels "org.opencontainers.image.version"}}`, name+":latest")); got != version {
		t.Fatalf("image %s:latest has org.opencontainers.image.version %q, want make version's %q", name, got, version)
	}
	p.checkLists(name, version)

	// A build that fails (here podman's, given a flag it does not know)
	// leaves the lists as they were, and podman able to list its images.
	before := p.run("manifest", "inspect", name+":"+version)
	if out, err := p.makeDocker(root, "IMAGE_BUILD_ARGS=--no-such-flag"); err == nil {
		record()
		t.Errorf("make docker with a failing podman build succeeded:\n%s", out)
	}
	if after := p.run("manifest", "inspect", name+":"+version); after != before {
		t.Errorf("a failed make docker changed %s:%s from\n%s\nto\n%s", name, version, before, after)
	}
	p.checkLists(name, version)
	if out, err := p.try("images"); err != nil {
		t.Errorf("podman images after a failed make docker: %v\n%s", err, out)
	}
	out, err = p.makeDocker(root)
	record()
	if err != nil {
		t.Fatalf("make docker DOCKER=podman, again: %v\n%s", err, out)
	}
	return name + ":latest", version
}

// checkLists fails the test unless name:version and name:latest are
// manifest lists of one image per platform, each built from its own
// cross-compiled binaries.
func (p podman) checkLists(name, version string) {
	t := p.t
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	// IMAGE:VERSION and :latest are manifest lists of one image per
	// platform, each built from its own cross-compiled binary.
	for _, tag := range []string{version, "latest"} {
		var list struct {
			Manifests []struct {
				Digest   string
				Platform struct{ OS, Architecture string }
			}
		}
		if err := json.Unmarshal([]byte(p.run("manifest", "inspect", name+":"+tag)), &list); err != nil {
			t.Fatalf("manifest inspect %s:%s: %v", name, tag, err)
		}
		var got []string
		for _, m := range list.Manifests {
			got = append(got, m.Platform.OS+"/"+m.Platform.Architecture)
		}
		if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(got, want) {
			t.Errorf("%s:%s lists platforms %q, want %q", name, tag, got, want)
		}
	}
	for _, arch := range imageArches {
		image := name + ":" + version + "-" + arch
		if got := strings.TrimSpace(p.run("image", "inspect", "--format", "{{.Os}}/{{.Architecture}}", image)); got != "linux/"+arch {
			t.Errorf("%s is for %s", image, got)
		}
		for _, file := range []string{"skillserver", fullBuild} {
			bin := filepath.Join(root, "bin", "linux-"+arch, file)
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatalf("%s: %v", bin, err)
			}
			if machine := f.Machine; machine != elfMachine[arch] {
				t.Errorf("%s is built for %s, want %s", bin, machine, elfMachine[arch])
			}
			f.Close()
		}
	}
}

// imageArches are the platforms `make docker` builds, and the ELF machine
// of each one's binary.
var (
	imageArches = []string{"amd64", "arm64"}
	elfMachine  = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
)

// container is one running container and the host URL of its port 8080.
type container struct {
	name string
	url  string
}

// start runs image detached with the given volumes (host:container:ro),
// publishing 8080 on a loopback port podman picks, and waits for /readyz.
// The container is removed when the test ends.
func (p podman) start(image string, volumes ...string) container {
	t := p.t
	t.Helper()
	c := container{name: uniqueName("skillserver-test")}
	args := []string{"run", "--detach", "--name", c.name, "--publish", "127.0.0.1::8080"}
	args = append(args, podmanRunFlags...)
	for _, v := range volumes {
		args = append(args, "--volume", v)
	}
	args = append(args, image)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := p.logs(c.name)
			t.Logf("logs of %s:\n%s", c.name, logs)
		}
		if _, err := p.try("rm", "--force", "--ignore", "--time", "0", c.name); err != nil {
			t.Errorf("remove container %s: %v", c.name, err)
		}
	})
	p.run(args...)

	// "127.0.0.1:43117": the host side of the published port.
	hostPort := strings.TrimSpace(p.run("port", c.name, "8080/tcp"))
	if _, _, err := net.SplitHostPort(hostPort); err != nil {
		t.Fatalf("podman port %s 8080/tcp = %q: %v", c.name, hostPort, err)
	}
	c.url = "http://" + hostPort

	fixture.Eventually(t, 60*time.Second, "container "+c.name+" is ready", func() error {
		err := fixture.Readyz(c.url)
		if err == nil {
			return nil
		}
		if state := strings.TrimSpace(p.run("inspect", "--format", "{{.State.Status}}", c.name)); state != "running" {
			logs, _ := p.logs(c.name)
			t.Fatalf("container %s is %s before it was ready:\n%s", c.name, state, logs)
		}
		return err
	})
	return c
}

// logs returns what the container wrote to stdout and stderr.
func (p podman) logs(name string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, p.bin, append(append([]string{}, podmanGlobal...), "logs", name)...).CombinedOutput()
	return string(out), err
}

// getBody GETs an absolute URL (testServer.get does not prefix those).
func getBody(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	return fixture.Get(t, url)
}
