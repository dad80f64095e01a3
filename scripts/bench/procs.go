//go:build linux

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/skillserver/skillserver/internal/benchtree"
)

// tree generates (or reuses) a bench tree of skills skills in dir.
func tree(dir string, skills int) (*benchtree.Tree, error) {
	agents := max(skills/10, 1)
	start := time.Now()
	t, generated, err := benchtree.OpenOrGenerate(dir, skills, agents)
	if err != nil {
		return nil, err
	}
	verb := "reusing"
	if generated {
		verb = "generated"
	}
	logf("%s tree %s in %v: %d skills (%d with resources), %d agents, %d files, %d bytes",
		verb, t.Dir, time.Since(start).Round(time.Millisecond), t.Skills, t.SkillsWithResources, t.Agents, t.Files, t.Bytes)
	return t, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// freePort returns a loopback port nothing listens on right now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// proc is a started process, stopped by its pid.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func start(name string, cmd *exec.Cmd) (*proc, error) {
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop sends sig to the process and waits for it, killing it after 10 s.
func (p *proc) stop(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(p.pid(), sig)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		logf("%s (pid %d) did not stop on %v; killing it", p.name, p.pid(), sig)
		_ = syscall.Kill(p.pid(), syscall.SIGKILL)
		<-p.done
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitFor polls url until it answers 200, p exits, or limit passes.
func waitFor(ctx context.Context, p *proc, url string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if p.exited() {
			return fmt.Errorf("exited before answering: %v", p.err)
		}
		if resp, err := http.Get(url); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer 200 within %v", url, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// rssBytes is the process's resident set (VmRSS).
func rssBytes(pid int) (int64, error) { return statusBytes(pid, "VmRSS") }

// peakRSSBytes is the most the process's resident set has been (VmHWM).
func peakRSSBytes(pid int) (int64, error) { return statusBytes(pid, "VmHWM") }

// statusBytes is the figure key (in kB) of /proc/<pid>/status, in bytes.
func statusBytes(pid int, key string) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no " + key + " in /proc/<pid>/status")
}

// nginxConf is nginx's configuration: its usual defaults (one worker per
// core, sendfile, the combined access log to a file), serving root.
// keepalive_requests is raised so that neither side closes wrk's
// connections during a run (the server never does).
const nginxConf = `worker_processes auto;
daemon off;
master_process on;
pid {{prefix}}/nginx.pid;
error_log {{prefix}}/error.log;
{{user}}
events { worker_connections 1024; }
http {
	types {
		application/json json;
		text/markdown md;
		application/zip zip;
		application/octet-stream bin;
	}
	default_type application/octet-stream;
	access_log {{prefix}}/access.log;
	client_body_temp_path {{prefix}}/body;
	proxy_temp_path {{prefix}}/proxy;
	fastcgi_temp_path {{prefix}}/fastcgi;
	uwsgi_temp_path {{prefix}}/uwsgi;
	scgi_temp_path {{prefix}}/scgi;
	sendfile on;
	tcp_nopush on;
	keepalive_requests 10000000;
	gzip_static on;
	server {
		listen 127.0.0.1:{{port}};
		root {{root}};
	}
}
`

// startNginx serves root with nginx from a temporary prefix in dir.
func startNginx(ctx context.Context, root, dir string) (*proc, string, error) {
	bin := os.Getenv("NGINX")
	if bin == "" {
		bin = "/usr/sbin/nginx"
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, "", fmt.Errorf("nginx: %w (apt-get install -y nginx, or set NGINX)", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	prefix := filepath.Join(dir, "nginx")
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return nil, "", err
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;" // the mirror sits in a private temporary folder
	}
	conf := strings.NewReplacer("{{prefix}}", prefix, "{{port}}", strconv.Itoa(port), "{{root}}", root, "{{user}}", user).Replace(nginxConf)
	confPath := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, "", err
	}
	cmd := exec.Command(bin, "-p", prefix, "-c", confPath, "-e", filepath.Join(prefix, "error.log"))
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	p, err := start("nginx", cmd)
	if err != nil {
		return nil, "", err
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	// nginx answers 403 for the root folder without an index; any answer
	// means it is up.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if p.exited() {
			return nil, "", fmt.Errorf("nginx exited: %v: %s", p.err, stderr.String())
		}
		if resp, err := http.Get(base + "/"); err == nil {
			resp.Body.Close()
			return p, base, nil
		}
		if time.Now().After(deadline) {
			p.stop(syscall.SIGQUIT)
			return nil, "", errors.New("nginx did not answer within 10s")
		}
		select {
		case <-ctx.Done():
			p.stop(syscall.SIGQUIT)
			return nil, "", ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// fetched is one response, read whole.
type fetched struct {
	status   int
	body     []byte
	etag     string
	encoding string
	header   http.Header
}

func (f fetched) sum() string {
	s := sha256.Sum256(f.body)
	return hex.EncodeToString(s[:])
}

// get fetches url with headers, without decoding anything.
func get(url string, headers ...string) (fetched, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return fetched{}, err
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: time.Minute}).Do(req)
	if err != nil {
		return fetched{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return fetched{status: resp.StatusCode, body: body, etag: resp.Header.Get("ETag"), encoding: resp.Header.Get("Content-Encoding"), header: resp.Header}, err
}

var (
	wrkRate   = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkCount  = regexp.MustCompile(`([0-9]+) requests in `)
	wrkNon2xx = regexp.MustCompile(`Non-2xx or 3xx responses:\s+([0-9]+)`)
	wrkErrors = regexp.MustCompile(`Socket errors: connect ([0-9]+), read ([0-9]+), write ([0-9]+), timeout ([0-9]+)`)
)

// wrk runs `wrk -t1 -c<conns> -d<d> --timeout 60s` on url and returns requests per
// second and the number of requests answered.
func wrk(ctx context.Context, url string, conns int, d time.Duration, headers []string) (rate float64, requests int64, err error) {
	// wrk's default 2 s request timeout is too short for the index of a
	// large tree (9 MB at 10,000 skills) over 32 connections.
	args := []string{"-t1", "-c" + strconv.Itoa(conns), "-d" + strconv.Itoa(int(d.Seconds())) + "s", "--timeout", "60s"}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	args = append(args, url)
	cmd := exec.Command("wrk", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	p, err := start("wrk", cmd)
	if err != nil {
		return 0, 0, fmt.Errorf("%w (apt-get install -y wrk)", err)
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		p.stop(syscall.SIGTERM)
		return 0, 0, ctx.Err()
	case <-time.After(d + 30*time.Second):
		p.stop(syscall.SIGTERM)
		return 0, 0, fmt.Errorf("wrk %s did not finish", url)
	}
	if p.err != nil {
		return 0, 0, fmt.Errorf("wrk %s: %v: %s", url, p.err, out.String())
	}
	text := out.String()
	if m := wrkNon2xx.FindStringSubmatch(text); m != nil {
		return 0, 0, fmt.Errorf("wrk %s: %s non-2xx/3xx answers:\n%s", url, m[1], text)
	}
	if m := wrkErrors.FindStringSubmatch(text); m != nil && (m[1] != "0" || m[2] != "0" || m[3] != "0" || m[4] != "0") {
		return 0, 0, fmt.Errorf("wrk %s: socket errors:\n%s", url, text)
	}
	m := wrkRate.FindStringSubmatch(text)
	if m == nil {
		return 0, 0, fmt.Errorf("wrk %s: no Requests/sec in:\n%s", url, text)
	}
	rate, err = strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, 0, err
	}
	c := wrkCount.FindStringSubmatch(text)
	if c == nil {
		return 0, 0, fmt.Errorf("wrk %s: no request count in:\n%s", url, text)
	}
	requests, err = strconv.ParseInt(c[1], 10, 64)
	return rate, requests, err
}

// loadavg is /proc/loadavg's three averages.
func loadavg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// cpuSeconds is the CPU time (user and system) the processes have used.
func cpuSeconds(pids []int) (float64, error) {
	var ticks int64
	for _, pid := range pids {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return 0, err
		}
		// The command name, in parentheses, may hold spaces: fields
		// count from the last ')'. utime and stime are fields 14 and 15.
		f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		if len(f) < 13 {
			return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
		}
		for _, v := range f[11:13] {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, err
			}
			ticks += n
		}
	}
	return float64(ticks) / clockTicks, nil
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// withChildren is pid and its child processes (nginx's workers).
func withChildren(pid int) []int {
	pids := []int{pid}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			pids = append(pids, child)
		}
	}
	return pids
}
