package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// eventually calls check every 20ms until it returns nil, and fails the
// test with what and check's last error when that has not happened
// within timeout. It is this package's one poll loop, for what no event
// tells a test: another process's state, or a file watch's reload seen
// through HTTP.
func eventually(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
	}
}

// readyz returns nil once base/readyz answers 200.
func readyz(base string) error {
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz answered %d", resp.StatusCode)
	}
	return nil
}
