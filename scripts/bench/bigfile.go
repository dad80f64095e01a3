//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/skillserver/skillserver/internal/benchtree"
	"github.com/skillserver/skillserver/internal/skill"
)

// bigClients is how many clients download the big file at once.
const bigClients = 8

// bigFile serves a tree of one skill holding a resource of mib MiB from a
// state directory and reports the server's RSS before and at its peak
// while bigClients clients download the resource at once (sampled every
// 10 ms), and how many of the bytes the kernel sent (sendfile).
func bigFile(ctx context.Context, bin, trees, work string, mib int, maxReady time.Duration) error {
	t, err := bigTree(filepath.Join(trees, fmt.Sprintf("big-%dMiB", mib)), mib)
	if err != nil {
		return err
	}
	dir := filepath.Join(work, "big")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	limit := strconv.FormatInt(int64(mib+1)<<20, 10)
	readyCtx, cancel := context.WithTimeout(ctx, maxReady)
	defer cancel()
	srv, ready, err := startServer(readyCtx, bin, t, dir, func(base string) []string {
		return []string{"--state-dir", filepath.Join(dir, "state"), "--max-file-bytes", limit, "--max-total-bytes", limit, "--watch=false"}
	})
	if err != nil {
		return err
	}
	defer srv.stop(syscall.SIGTERM)
	// Ready comes before the scan's garbage (the file read and deflated)
	// is given back: measure from what the server settles at.
	if err := srv.memorySettled(ctx, maxReady); err != nil {
		return err
	}
	url := srv.base + "/.well-known/skills/big/data.bin"
	before, err := rssBytes(srv.pid())
	if err != nil {
		return err
	}
	scanPeak, err := peakRSSBytes(srv.pid())
	if err != nil {
		return err
	}
	sentBefore, err := metricValue(srv.base, "skillserver_http_sendfile_bytes_total")
	if err != nil {
		return err
	}
	var peak int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if rss, err := rssBytes(srv.pid()); err == nil && rss > peak {
				peak = rss
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	begin := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, bigClients)
	got := make([]int64, bigClients)
	for i := range bigClients {
		wg.Go(func() {
			resp, err := http.Get(url)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			got[i], errs[i] = io.Copy(io.Discard, resp.Body)
		})
	}
	wg.Wait()
	took := time.Since(begin)
	close(done)
	<-sampled
	for i, err := range errs {
		if err != nil || got[i] != int64(mib)<<20 {
			return fmt.Errorf("client %d: %d bytes, %v", i, got[i], err)
		}
	}
	sentAfter, err := metricValue(srv.base, "skillserver_http_sendfile_bytes_total")
	if err != nil {
		return err
	}
	total := int64(bigClients) * int64(mib) << 20
	fmt.Printf("\nbig file: one %d MiB resource, ready in %.2fs from an empty state directory (peak RSS of that scan %d); %d clients at once downloaded %d bytes in %.2fs\n",
		mib, ready.Seconds(), scanPeak, bigClients, total, took.Seconds())
	fmt.Printf("RSS before %d, peak while downloading %d, growth %d bytes (%.1f MiB); sent by the kernel (sendfile) %d of %d bytes\n",
		before, peak, peak-before, float64(peak-before)/(1<<20), int64(sentAfter-sentBefore), total)
	return nil
}

// bigTree is (or makes) a tree of one skill "big" whose data.bin holds
// mib MiB of bytes that do not compress.
func bigTree(dir string, mib int) (*benchtree.Tree, error) {
	data := filepath.Join(dir, "skills", "big", "data.bin")
	t := &benchtree.Tree{Dir: dir, Skills: 1, Files: 2, Bytes: int64(mib) << 20}
	if fi, err := os.Stat(data); err == nil && fi.Size() == int64(mib)<<20 {
		return t, nil
	}
	if err := os.MkdirAll(filepath.Join(dir, "agents"), 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(data), 0o755); err != nil {
		return nil, err
	}
	md := "---\nname: big\ndescription: One large resource, for the memory benchmark.\n---\n# big\n"
	if err := os.WriteFile(filepath.Join(dir, "skills", "big", skill.FileName), []byte(md), 0o644); err != nil {
		return nil, err
	}
	f, err := os.Create(data)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	block := make([]byte, 1<<20)
	x := uint64(0x9e3779b97f4a7c15)
	for range mib {
		for i := 0; i < len(block); i += 8 { // xorshift: cheap bytes deflate cannot shrink
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			for j := range 8 {
				block[i+j] = byte(x >> (8 * j))
			}
		}
		if _, err := f.Write(block); err != nil {
			return nil, err
		}
	}
	return t, f.Close()
}

// metricValue is the value of the unlabelled metric name on the server's
// /metrics.
func metricValue(base, name string) (float64, error) {
	f, err := get(base + "/metrics")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(f.body), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("/metrics has no %s", name)
}
