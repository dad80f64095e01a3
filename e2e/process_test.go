//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/fixture"
)

// testServer is a skillserver process serving on 127.0.0.1.
type testServer = fixture.Server

// startServerEnv is startServer with environment variables: the process
// gets the test's environment without its SKILLSERVER_ variables, and
// env.
func startServerEnv(t *testing.T, env map[string]string, args ...string) *testServer {
	t.Helper()
	full := append([]string{"serve", "--listen", "127.0.0.1:0", "--log-format", "json"}, args...)
	cmd := exec.Command(skillserverBin(), full...)
	cmd.Env = processEnv(env)
	return startServerCmd(t, cmd)
}

// startServerCmd starts cmd, a serve on 127.0.0.1:0 with JSON logs (or
// what execs one in its own pid), and waits until it is ready.
func startServerCmd(t *testing.T, cmd *exec.Cmd) *testServer {
	t.Helper()
	stderr := &fixture.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exited := false
	ts := fixture.NewServer("", stderr, func(t testing.TB) {
		t.Helper()
		if exited {
			return
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server exited with %v:\n%s", err, stderr)
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("server did not shut down on SIGTERM:\n%s", stderr)
		}
	})
	t.Cleanup(func() { ts.Stop(t) })

	// The listening line comes before the first scan, /readyz's 200
	// after it.
	fixture.Eventually(t, 30*time.Second, "the server process is ready", func() error {
		select {
		case err := <-done:
			exited = true
			t.Fatalf("server exited with %v before it was ready:\n%s", err, stderr)
		default:
		}
		if ts.URL == "" {
			addr := listeningAddr(stderr.String())
			if addr == "" {
				return errors.New("no listening line logged yet")
			}
			ts.URL = "http://" + addr
		}
		return fixture.Readyz(ts.URL)
	})
	return ts
}

// startServer runs `skillserver serve` with args (plus --listen
// 127.0.0.1:0 and JSON logs) as a process and waits until /readyz
// answers 200. The process is stopped by its pid, with SIGTERM, when the
// test ends, and must exit 0.
func startServer(t *testing.T, args ...string) *testServer {
	t.Helper()
	return startServerEnv(t, nil, args...)
}

// listeningAddr is the address of the "listening" line of a JSON log,
// or "" when it has none yet.
func listeningAddr(log string) string {
	for line := range strings.Lines(log) {
		var rec struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening" {
			return rec.Addr
		}
	}
	return ""
}

// processEnv is the environment of a skillserver process a test runs:
// the test's, less its SKILLSERVER_ variables (the switches of these
// suites among them), plus env.
func processEnv(env map[string]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SKILLSERVER_") {
			out = append(out, kv)
		}
	}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// runSkillserver runs `skillserver args...` to its end and returns its
// exit code, stdout and stderr.
func runSkillserver(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return execBinary(t, exec.Command(skillserverBin(), args...))
}

// runBinary runs bin with args and returns its exit code and stderr.
func runBinary(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	code, _, stderr := execBinary(t, exec.Command(bin, args...))
	return code, stderr
}

// execBinary runs cmd with processEnv(nil), unless it has an environment
// of its own, and returns its exit code, stdout and stderr.
func execBinary(t *testing.T, cmd *exec.Cmd) (code int, stdout, stderr string) {
	t.Helper()
	if cmd.Env == nil {
		cmd.Env = processEnv(nil)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(fmt.Errorf("%s: %w", cmd, err))
	}
	return code, out.String(), errOut.String()
}

// exampleTree is the bundled example tree, read in place.
func exampleTree(t *testing.T) (skills, agents string) {
	t.Helper()
	return fixture.Testdata(t, repoRoot)
}

// startPrivate runs the example tree as a private feed, with args.
func startPrivate(t *testing.T, args ...string) (*testServer, string) {
	t.Helper()
	private, file := fixture.PrivateArgs(t, repoRoot)
	return startServer(t, append(private, args...)...), file
}

// runExport runs `skillserver export` with args and fails the test unless
// it exits 0; it returns what export logged.
func runExport(t *testing.T, args ...string) string {
	t.Helper()
	code, _, stderr := runSkillserver(t, append([]string{"export"}, args...)...)
	if code != exitOK {
		t.Fatalf("export %q exited %d:\n%s", args, code, stderr)
	}
	return stderr
}
