package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
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

	"gocloud.dev/blob"

	"github.com/skillserver/skillserver/internal/fixture"
)

// The container test builds the image with `make docker DOCKER=podman` and
// runs it the way docs/operations.md tells operators to: read-only root
// file system, no capabilities, the example tree mounted read-only. It
// needs podman and runc as root, so it only runs when asked:
//
//	SKILLSERVER_CONTAINER_TEST=1 go test -run Container ./cmd/skillserver/
//
// .ci/run installs podman and runc and sets SKILLSERVER_CONTAINER_TEST=1.

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

const (
	// imageUser is the USER of the Dockerfile.
	imageUser = "65532:65532"
	// maxImageBytes guards against the image growing a base layer: it is
	// two static binaries and two empty folders, about 81 MB on amd64:
	// skillserver without export's bucket drivers (24 MB) and
	// skillserver-export with them (56 MB; the AWS, Azure and Google
	// Cloud Storage clients are 32 MB of it).
	maxImageBytes = 96 << 20
)

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
	root, err := filepath.Abs("../..")
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
	root, err := filepath.Abs("../..")
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

// TestContainerImage builds the image and checks the contract of
// docs/operations.md: it serves a mounted tree with verifiable digests,
// reports healthy through its HEALTHCHECK, runs as 65532, reports the
// version it is tagged with, and exits 0 on SIGTERM.
func TestContainerImage(t *testing.T) {
	p := requireContainerTest(t)
	image, version := p.buildImage()

	size, err := strconv.ParseInt(strings.TrimSpace(p.run("image", "inspect", "--format", "{{.Size}}", image)), 10, 64)
	if err != nil {
		t.Fatalf("image size: %v", err)
	}
	t.Logf("image %s (version %s): %d bytes (%.1f MB)", image, version, size, float64(size)/1e6)
	if size > maxImageBytes {
		t.Errorf("image is %d bytes, more than %d: the image should be the static binary on scratch", size, maxImageBytes)
	}
	// podman keeps the HEALTHCHECK beside the OCI config, not in it.
	var inspect []struct {
		Config struct {
			User       string
			Entrypoint []string
			Cmd        []string
			Env        []string
			Labels     map[string]string
		}
		Healthcheck struct{ Test []string }
	}
	if err := json.Unmarshal([]byte(p.run("image", "inspect", image)), &inspect); err != nil || len(inspect) != 1 {
		t.Fatalf("image inspect: %d images, %v", len(inspect), err)
	}
	cfg := inspect[0].Config
	if cfg.User != imageUser {
		t.Errorf("image USER = %q, want %q", cfg.User, imageUser)
	}
	if got := strings.Join(cfg.Entrypoint, " ") + " " + strings.Join(cfg.Cmd, " "); got != "/skillserver serve" {
		t.Errorf("ENTRYPOINT + CMD = %q, want %q", got, "/skillserver serve")
	}
	if got := strings.Join(inspect[0].Healthcheck.Test, " "); got != "CMD /skillserver healthcheck" {
		t.Errorf("HEALTHCHECK = %q, want CMD /skillserver healthcheck (a podman build without BUILDAH_FORMAT=docker drops it)", got)
	}
	for _, env := range []string{"SKILLSERVER_SKILLS=/skills", "SKILLSERVER_AGENTS=/agents"} {
		if !strings.Contains(strings.Join(cfg.Env, "\n")+"\n", env+"\n") {
			t.Errorf("image Env %q lacks %s", cfg.Env, env)
		}
	}
	for _, label := range []string{"title", "description", "version", "revision", "created", "source", "licenses"} {
		if cfg.Labels["org.opencontainers.image."+label] == "" {
			t.Errorf("label org.opencontainers.image.%s is missing", label)
		}
	}

	if out, _, _ := strings.Cut(p.run("run", "--rm", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024", image, "version"), "\n"); out != version {
		t.Errorf("`skillserver version` in the image printed %q, want the image tag %q", out, version)
	}

	skills, agents := exampleTree(t)

	// The README's podman run line, as written, from the repository
	// root: only the host port is a free one instead of 8080, and
	// podmanGlobal's flags and a --name go after "podman", to pin what
	// podman would guess on a CI host and to stop it.
	t.Run("README run line", func(t *testing.T) {
		line := fixture.READMEShellLines(t, "../..", "podman run ")[0]
		root, err := filepath.Abs("../..")
		if err != nil {
			t.Fatal(err)
		}
		addr := fixture.FreePort(t)
		cmdline := strings.Replace(line, " -p 8080:8080 ", " -p "+addr+":8080 ", 1)
		if cmdline == line {
			t.Fatalf("the README's podman run line publishes no -p 8080:8080: %s", line)
		}
		name := "skillserver-readme-" + strconv.Itoa(os.Getpid())
		cmdline = strings.Replace(cmdline, "podman run ", p.bin+" "+strings.Join(podmanGlobal, " ")+" run --name "+name+" ", 1)
		var out fixture.SyncBuffer
		cmd := exec.Command("bash", "-c", cmdline)
		cmd.Dir, cmd.Stdout, cmd.Stderr = root, &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if _, err := p.try("stop", "--time", "5", name); err != nil {
				t.Logf("podman stop %s: %v", name, err)
			}
			_ = cmd.Wait()
		})
		base := "http://" + addr
		fixture.Eventually(t, time.Minute, "the README's container answers /readyz", func() error {
			if err := fixture.Readyz(base); err != nil {
				return fmt.Errorf("%w (podman: %s)", err, out.String())
			}
			return nil
		})
		resp, body := getBody(t, base+"/.well-known/agent-skills/index.json")
		var idx fixture.RFCIndex
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &idx) != nil || len(idx.Skills) != 5 {
			t.Errorf("the README's container: index %d with %d skills, want 200 with the example tree's 5", resp.StatusCode, len(idx.Skills))
		}
	})

	t.Run("serve", func(t *testing.T) {
		p := podman{t: t, bin: p.bin}
		c := p.start(image, skills+":/skills:ro", agents+":/agents:ro")

		resp, body := getBody(t, c.url+"/.well-known/agent-skills/index.json")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("index: status %d", resp.StatusCode)
		}
		var idx fixture.RFCIndex
		if err := json.Unmarshal(body, &idx); err != nil {
			t.Fatalf("index: %v", err)
		}
		var names []string
		for _, s := range idx.Skills {
			names = append(names, s.Name)
			if !strings.HasPrefix(s.URL, c.url+"/api/v1/blobs/sha256/") {
				t.Errorf("%s: url %q is not under %s", s.Name, s.URL, c.url)
				continue
			}
			r, b := getBody(t, s.URL)
			if r.StatusCode != http.StatusOK || fixture.SHA(b) != s.Digest {
				t.Errorf("%s: GET %s: status %d digest %s, want %s", s.Name, s.URL, r.StatusCode, fixture.SHA(b), s.Digest)
			}
		}
		if got, want := strings.Join(names, ","), "code-review,k8s-deploy,release-notes,support-triage,windows-notes"; got != want {
			t.Errorf("skills = %s, want %s", got, want)
		}

		var info struct{ Version string }
		if _, b := getBody(t, c.url+"/api/v1/info"); json.Unmarshal(b, &info) != nil || info.Version != version {
			t.Errorf("/api/v1/info version = %q, want the image tag %q", info.Version, version)
		}

		// The image's HEALTHCHECK is `skillserver healthcheck` in the
		// container; without systemd podman runs no timer, so run it.
		if out, err := p.try("healthcheck", "run", c.name); err != nil {
			t.Errorf("podman healthcheck run: %v %s", err, out)
		}
		if status := strings.TrimSpace(p.run("inspect", "--format", "{{.State.Health.Status}}", c.name)); status != "healthy" {
			t.Errorf("health status = %q, want healthy", status)
		}

		// A scratch image has no shell to exec into: ask podman which user
		// the process runs as.
		if user := strings.TrimSpace(p.run("inspect", "--format", "{{.Config.User}}", c.name)); user != imageUser {
			t.Errorf("container user = %q, want %q", user, imageUser)
		}
		top := strings.Fields(p.run("top", c.name, "user", "group", "args"))
		// USER GROUP COMMAND, then one row: 65532 65532 /skillserver serve
		if len(top) < 5 || top[3] != "65532" || top[4] != "65532" {
			t.Errorf("podman top: %q, want the server running as 65532:65532", top)
		}

		// SIGTERM drains and exits 0; the logs are JSON lines with a
		// request_id on each request line.
		p.run("stop", "--time", "20", c.name)
		if code := strings.TrimSpace(p.run("inspect", "--format", "{{.State.ExitCode}}", c.name)); code != "0" {
			t.Errorf("exit code after podman stop = %s, want 0", code)
		}
		logs, err := p.logs(c.name)
		if err != nil {
			t.Fatalf("podman logs: %v", err)
		}
		msgs := map[string]int{}
		for line := range strings.Lines(logs) {
			if !strings.HasPrefix(line, "{") {
				continue // podman's own stderr
			}
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Errorf("log line is not JSON: %v: %s", err, line)
				continue
			}
			msg, _ := rec["msg"].(string)
			msgs[msg]++
			if id, _ := rec["request_id"].(string); msg == "request" && id == "" {
				t.Errorf("request log line without request_id: %s", line)
			}
		}
		for _, msg := range []string{"listening", "reload", "request", "shutting down"} {
			if msgs[msg] == 0 {
				t.Errorf("no %q log line in:\n%s", msg, logs)
			}
		}
	})

	// Mounting only /skills is enough: the image's empty /agents keeps the
	// explicitly configured SKILLSERVER_AGENTS valid.
	t.Run("skills only", func(t *testing.T) {
		p := podman{t: t, bin: p.bin}
		c := p.start(image, skills+":/skills:ro")
		resp, body := getBody(t, c.url+"/subagents/v1/index.json")
		if resp.StatusCode != http.StatusOK {
			t.Errorf("/subagents/v1/index.json: status %d, want 200 (an empty tree):\n%s", resp.StatusCode, body)
		}
		var info struct{ Skills, Agents int }
		if _, b := getBody(t, c.url+"/api/v1/info"); json.Unmarshal(b, &info) != nil || info.Skills != 5 || info.Agents != 0 {
			t.Errorf("/api/v1/info: %+v, want 5 skills and 0 sub-agents", info)
		}
	})

	// The image's /skillserver has no bucket drivers: an export into a
	// bucket runs /skillserver-export, the full build beside it. Against
	// a closed port, the error is the S3 client's, not the refusal
	// naming no_s3blob; against a real S3 server (SKILLSERVER_S3_TEST=1)
	// the bucket gets the export.
	export := func(t *testing.T, out string) (int, string) {
		args := append([]string{"run", "--rm", "--network", "host"}, podmanRunFlags...)
		for _, env := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_EC2_METADATA_DISABLED"} {
			args = append(args, "--env", env)
		}
		args = append(args, "--volume", skills+":/skills:ro", image,
			"export", "--base-url", "https://skills.example.com", "--out", out)
		cmd := exec.Command(p.bin, append(append([]string{}, podmanGlobal...), args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode(), stderr.String()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, stderr.String()
	}
	t.Run("export delegates", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", "none")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "none")
		t.Setenv("AWS_REGION", "us-east-1")
		t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
		code, stderr := export(t, "s3://skills?endpoint=http://127.0.0.1:9&use_path_style=true&disable_https=true&region=us-east-1")
		if code != exitFailure || strings.Contains(stderr, "no_s3blob") || !strings.Contains(stderr, "127.0.0.1:9") {
			t.Errorf("export into an S3 bucket on a closed port: exit %d, stderr %q; want 1 with the S3 client's error", code, stderr)
		}
	})
	t.Run("export to S3", func(t *testing.T) {
		bucketURL := startS3(t)
		if code, stderr := export(t, bucketURL); code != 0 {
			t.Fatalf("export into %s: exit %d: %s", bucketURL, code, stderr)
		}
		b, err := blob.OpenBucket(t.Context(), bucketURL)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if ok, err := b.Exists(t.Context(), ".well-known/agent-skills/index.json"); !ok || err != nil {
			t.Errorf("the bucket has no RFC index after the export from the image (%v)", err)
		}
	})
}
