//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skillserver/skillserver/internal/benchtree"
)

// server is a running skillserver.
type server struct {
	*proc
	base    string
	logPath string
	begin   time.Time // when it was started
}

// watchSettled waits until the server's file watch is set up and its
// verify of the tree is done ("file watch ready"), or the watch is
// unavailable (the kernel's watch limit, typically), and returns how long
// after the start that was and whether the watch is on. Until then the
// server is ready but still listing folders and rescanning, so its
// memory is not what it settles at.
func (s *server) watchSettled(ctx context.Context, limit time.Duration) (time.Duration, bool, error) {
	var on bool
	after, err := s.awaitLog(ctx, limit, `"file watch ready"`, func(msg string) bool {
		on = msg == "file watch ready"
		return on || strings.HasPrefix(msg, "file watch unavailable")
	})
	return after, on, err
}

// memorySettled waits until the server has given back the first scan's
// garbage ("memory settled"), which it does once ready (without the file
// watch) or after the watch's verify.
func (s *server) memorySettled(ctx context.Context, limit time.Duration) error {
	_, err := s.awaitLog(ctx, limit, `"memory settled"`, func(msg string) bool { return msg == "memory settled" })
	return err
}

// awaitLog polls the server's log until a line's message matches and
// returns how long after the start that was; what names the line in the
// error.
func (s *server) awaitLog(ctx context.Context, limit time.Duration, what string, match func(msg string) bool) (time.Duration, error) {
	deadline := time.Now().Add(limit)
	for {
		data, err := os.ReadFile(s.logPath)
		if err != nil {
			return 0, err
		}
		for _, line := range strings.Split(string(data), "\n") {
			var rec struct {
				Msg string `json:"msg"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && match(rec.Msg) {
				return time.Since(s.begin), nil
			}
		}
		if s.exited() || time.Now().After(deadline) {
			return 0, fmt.Errorf("skillserver: no %s line within %v (log: %s)", what, limit, s.logPath)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// startServer runs bin serve on tree t with its default settings (request
// log at info, JSON, to a file), plus the flags extra returns for the
// server's base URL (nil: none).
func startServer(ctx context.Context, bin string, t *benchtree.Tree, dir string, extra func(base string) []string) (*server, time.Duration, error) {
	port, err := freePort()
	if err != nil {
		return nil, 0, err
	}
	logPath := filepath.Join(dir, "skillserver.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, 0, err
	}
	defer logFile.Close()
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	args := []string{"serve", "--listen", "127.0.0.1:" + strconv.Itoa(port),
		"--skills", filepath.Join(t.Dir, "skills"), "--agents", filepath.Join(t.Dir, "agents")}
	if extra != nil {
		args = append(args, extra(base)...)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	begin := time.Now()
	p, err := start("skillserver", cmd)
	if err != nil {
		return nil, 0, err
	}
	s := &server{proc: p, base: base, logPath: logPath, begin: begin}
	if err := waitFor(ctx, p, s.base+"/readyz", 30*time.Minute); err != nil {
		s.stop(syscall.SIGTERM)
		return nil, 0, fmt.Errorf("skillserver: %w (log: %s)", err, logPath)
	}
	return s, time.Since(begin), nil
}

// readyGeneration is the generation /readyz reports.
func readyGeneration(base string) (uint64, error) {
	f, err := get(base + "/readyz")
	if err != nil {
		return 0, err
	}
	var body struct {
		Generation uint64 `json:"generation"`
	}
	if err := json.Unmarshal(f.body, &body); err != nil {
		return 0, fmt.Errorf("/readyz: %w", err)
	}
	return body.Generation, nil
}
