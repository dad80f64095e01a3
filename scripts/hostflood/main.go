// Command hostflood measures, on loopback, the req/s of a regular host's
// document after junk Host values, and while a new Host arrives with
// every request (docs/operations.md, "Limits and abuse"). Run it against
// a server started with base_url empty:
//
//	go run -C scripts ./hostflood -addr 127.0.0.1:8080 -junk 8 -d 5s
package main

import (
	"flag"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18300", "server")
	path := flag.String("path", "/.well-known/agent-skills/index.json", "document")
	conc := flag.Int("c", 8, "concurrent clients")
	dur := flag.Duration("d", 5*time.Second, "duration of each phase")
	junk := flag.Int("junk", 8, "junk hosts sent first")
	gz := flag.Bool("gzip", true, "ask for gzip")
	flag.Parse()
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	get := func(host string) (int, error) {
		req, _ := http.NewRequest("GET", "http://"+*addr+*path, nil)
		req.Host = host
		if *gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		return int(n), nil
	}
	for i := range *junk {
		if _, err := get(fmt.Sprintf("junk-%d.test", i)); err != nil {
			fmt.Printf("junk host %d: %v\n", i, err)
		}
	}
	n, _ := get("skills.example.com")
	fmt.Printf("index body %d bytes (gzip %v)\n", n, *gz)
	run := func(name string, hostFor func(worker, i int) string, workers int) float64 {
		var count, fails atomic.Int64
		var wg sync.WaitGroup
		stop := time.Now().Add(*dur)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; time.Now().Before(stop); i++ {
					if _, err := get(hostFor(w, i)); err != nil {
						fails.Add(1)
					} else {
						count.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		rps := float64(count.Load()) / dur.Seconds()
		fmt.Printf("%-55s %8.0f req/s  (%d failed)\n", name, rps, fails.Load())
		return rps
	}
	legit := func(int, int) string { return "skills.example.com" }
	run(fmt.Sprintf("regular host, after %d junk hosts", *junk), legit, *conc)
	var seq atomic.Int64
	fresh := func(int, int) string { return fmt.Sprintf("h%d.test", seq.Add(1)) }
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); run("  attacker: a new Host per request (4 clients)", fresh, 4) }()
	run("  regular host while that runs (4 clients)", legit, 4)
	wg.Wait()
}
