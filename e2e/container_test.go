//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
//	SKILLSERVER_CONTAINER_TEST=1 go test -run Container ./e2e/
//
// .ci/run installs podman and runc and sets SKILLSERVER_CONTAINER_TEST=1.

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
		line := fixture.READMEShellLines(t, repoRoot, "podman run ")[0]
		root, err := filepath.Abs(repoRoot)
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
			if _, err := p.try("volume", "rm", "--force", "skillserver-state"); err != nil {
				t.Logf("podman volume rm skillserver-state: %v", err)
			}
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
		// The named volume is writable by the image's user: the bytes
		// are kept in it, not in memory.
		if !strings.Contains(out.String(), `"msg":"state directory","path":"/var/lib/skillserver/`) {
			t.Errorf("the README's container keeps no state_dir in its volume:\n%s", out.String())
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
