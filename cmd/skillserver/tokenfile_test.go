package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/fixture"
)

// logFile is a server log written to a file, as the server's stderr
// redirected there would be, and kept in memory for the test to read.
type logFile struct {
	f   *os.File
	buf fixture.SyncBuffer
}

func (l *logFile) Write(p []byte) (int, error) {
	_, _ = l.buf.Write(p)
	return l.f.Write(p)
}

// startServerLog is startServerEnv with the log written to w.
func startServerLog(t *testing.T, w io.Writer, args ...string) string {
	t.Helper()
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), readyKey{}, func(addr string) { ready <- addr }))
	done := make(chan int, 1)
	go func() {
		done <- runMain(ctx, append([]string{"serve", "--listen", "127.0.0.1:0", "--log-format", "json"}, args...),
			func(string) string { return "" }, io.Discard, w)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("server exited with %d", code)
		}
	})
	select {
	case addr := <-ready:
		return "http://" + addr
	case code := <-done:
		t.Fatalf("server exited with %d before it was ready", code)
	case <-time.After(30 * time.Second):
		t.Fatal("server not ready in 30s")
	}
	return ""
}

// countLines counts the log lines holding every one of parts.
func countLines(log string, parts ...string) int {
	n := 0
	for line := range strings.SplitSeq(log, "\n") {
		all := line != ""
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			n++
		}
	}
	return n
}

// TestBrokenTokenFileLogsOnce: with the log file in the token file's
// folder, a broken token file is logged once, not once per line the log
// gains (each a file event in that folder): before, each ERROR line was
// the event of the next, about 180 a second. Writes to the log file are
// no change of the token file.
func TestBrokenTokenFileLogsOnce(t *testing.T) {
	skills, _ := exampleTree(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "tokens")
	fixture.WriteTokens(t, file, "all "+fixture.AllSecret+" *\n")
	f, err := os.Create(filepath.Join(dir, "skillserver.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lf := &logFile{f: f}
	base := startServerLog(t, lf, "--skills", skills, "--read-tokens-file", file, "--watch-debounce", "10ms", "--log-buffer-bytes", "0")

	const notReloaded = `"msg":"read tokens not reloaded`
	fixture.WriteTokens(t, file, "all "+fixture.AllSecret+" *\nbroken\n")
	fixture.Eventually(t, 10*time.Second, "the broken file is logged", func() error {
		if countLines(lf.buf.String(), notReloaded) == 0 {
			return fmt.Errorf("not logged yet")
		}
		return nil
	})
	// Every request is a line of the log, a write in the folder.
	for range 50 {
		if resp, _ := fixture.Fetch(t, "GET", base+"/manifest.json", "Bearer "+fixture.AllSecret, ""); resp.StatusCode != http.StatusOK {
			t.Fatalf("the tokens in force answer %d", resp.StatusCode)
		}
	}
	// The watch handles events in order: once a good file written after
	// those writes is read, every event before it has been handled.
	fixture.WriteTokens(t, file, "all "+fixture.AllSecret+" *\nnew "+fixture.NewSecret+" *\n")
	fixture.Eventually(t, 10*time.Second, "the good file is read", func() error {
		if countLines(lf.buf.String(), `"msg":"read tokens reloaded"`) == 0 {
			return fmt.Errorf("not read yet")
		}
		return nil
	})
	if n := countLines(lf.buf.String(), notReloaded); n != 1 {
		t.Errorf("the broken file was logged %d times, want 1:\n%.3000s", n, lf.buf.String())
	}
}

// TestHalfWrittenTokenFileNeverWidens: a scoped token's line rewritten
// in two writes, the first cut after the secret, never lets the token
// read an item out of its scope: before, the cut line was read as a
// token with no pattern, which read everything, until the second write.
func TestHalfWrittenTokenFileNeverWidens(t *testing.T) {
	skills, agents := exampleTree(t)
	file := filepath.Join(t.TempDir(), "tokens")
	fixture.WriteTokens(t, file, "all "+fixture.AllSecret+" *\nteam "+fixture.TeamSecret+" code-*\n")
	ts := startServer(t, "--skills", skills, "--agents", agents, "--read-tokens-file", file, "--watch-debounce", "10ms")
	outOfScope := ts.URL + "/api/v1/skills/release-notes"
	if resp, _ := fixture.Fetch(t, "GET", outOfScope, "Bearer "+fixture.TeamSecret, ""); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("out of scope before the rewrite: %d, want 404", resp.StatusCode)
	}
	// Probe the out-of-scope item all along.
	var widened atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			req, _ := http.NewRequest("GET", outOfScope, nil)
			req.Header.Set("Authorization", "Bearer "+fixture.TeamSecret)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					widened.Add(1)
				}
			}
		}
	})
	stopProbe := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopProbe()

	// How the reading of the file after each write was logged.
	readings := func() int {
		log := ts.Stderr.String()
		return countLines(log, `"msg":"read tokens reloaded"`) + countLines(log, `"msg":"read tokens not reloaded`)
	}
	before := readings()
	fh, err := os.OpenFile(file, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.WriteString("all " + fixture.AllSecret + " *\nteam " + fixture.TeamSecret); err != nil {
		t.Fatal(err)
	}
	fixture.Eventually(t, 10*time.Second, "the cut file is read", func() error {
		if readings() == before {
			return fmt.Errorf("not read yet")
		}
		return nil
	})
	if resp, _ := fixture.Fetch(t, "GET", outOfScope, "Bearer "+fixture.TeamSecret, ""); resp.StatusCode == http.StatusOK {
		t.Errorf("out of scope after the first write: 200")
	}
	if _, err := fh.WriteString(" code-* k8s-deploy\n"); err != nil {
		t.Fatal(err)
	}
	fixture.Eventually(t, 10*time.Second, "the whole file is read", func() error {
		if resp, _ := fixture.Fetch(t, "GET", ts.URL+"/api/v1/skills/k8s-deploy", "Bearer "+fixture.TeamSecret, ""); resp.StatusCode != http.StatusOK {
			return fmt.Errorf("k8s-deploy: %d", resp.StatusCode)
		}
		return nil
	})
	if resp, _ := fixture.Fetch(t, "GET", outOfScope, "Bearer "+fixture.TeamSecret, ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("out of scope after the second write: %d, want 404", resp.StatusCode)
	}
	stopProbe()
	if n := widened.Load(); n > 0 {
		t.Errorf("the scoped token read an out-of-scope item %d times while the file was half-written", n)
	}
	if log := ts.Stderr.String(); !strings.Contains(log, "newline") {
		t.Errorf("the cut file's error does not say it lacks its final newline:\n%.3000s", log)
	}
}

// TestDeletedTokenFileKeepsTokens: deleting the token file revokes
// nothing (a file renamed away for a moment must not lock every reader
// out), and the log says so, at ERROR, once; SIGHUP says it again.
func TestDeletedTokenFileKeepsTokens(t *testing.T) {
	skills, _ := exampleTree(t)
	file := filepath.Join(t.TempDir(), "tokens")
	fixture.WriteTokens(t, file, "all "+fixture.AllSecret+" *\n")
	ts := startServer(t, "--skills", skills, "--read-tokens-file", file, "--watch-debounce", "10ms")
	const missing = `"msg":"read token file missing; the tokens read before stay in force`
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	fixture.Eventually(t, 10*time.Second, "the deletion is logged", func() error {
		if countLines(ts.Stderr.String(), missing, `"level":"ERROR"`, `"tokens":["all"]`, `"read_at":`) == 0 {
			return fmt.Errorf("not logged yet")
		}
		return nil
	})
	if resp, _ := fixture.Fetch(t, "GET", ts.URL+"/manifest.json", "Bearer "+fixture.AllSecret, ""); resp.StatusCode != http.StatusOK {
		t.Errorf("a token of the deleted file: %d, want 200", resp.StatusCode)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	fixture.Eventually(t, 10*time.Second, "SIGHUP logs it again", func() error {
		if n := countLines(ts.Stderr.String(), missing); n != 2 {
			return fmt.Errorf("logged %d times", n)
		}
		return nil
	})
	// A file written again is read again.
	fixture.WriteTokens(t, file, "new "+fixture.NewSecret+" *\n")
	fixture.Eventually(t, 10*time.Second, "the new file is read", func() error {
		if resp, _ := fixture.Fetch(t, "GET", ts.URL+"/manifest.json", "Bearer "+fixture.AllSecret, ""); resp.StatusCode != http.StatusForbidden {
			return fmt.Errorf("the old token: %d", resp.StatusCode)
		}
		return nil
	})
	if n := countLines(ts.Logged(t), missing); n != 2 {
		t.Errorf("the deletion was logged %d times, want 2 (once, and on SIGHUP)", n)
	}
}
