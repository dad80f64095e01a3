//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillserver/skillserver/internal/benchtree"
	"github.com/skillserver/skillserver/internal/fixture"
)

// The MCP interop tests drive the two real clients of the skills extension
// of MCP (SEP-2640) against the real program's /mcp endpoint: the MCP
// Inspector's CLI, which lists every skill, reads every file it lists and
// checks each digest and size (--verify --require-digests), and the
// extension's conformance suite. Both run on Node 22 through npx, as the
// skills CLI does (requireInterop, cliEnv), so only with
// SKILLSERVER_INTEROP=1.
const (
	inspectorPkg   = "@modelcontextprotocol/inspector@2.12.0"
	inspectorBin   = "mcp-inspector"
	conformancePkg = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
	conformanceBin = "conformance"

	// The Inspector's exit codes for --verify (its EXIT_CODES): every
	// skill verified, a skill failed (nonconformant, or a digest or size
	// that does not match the bytes read).
	inspectorOK            = 0
	inspectorNonconformant = 7

	// modernRevision is the MCP revision the modern era pins.
	modernRevision = "2026-07-28"
)

// inspectorEras are the Inspector's --protocol-era values: legacy (the
// initialize handshake), modern (server/discover, stateless, 2026-07-28)
// and auto (probes with server/discover, falls back to legacy).
var inspectorEras = []string{"legacy", "modern", "auto"}

// npxTool runs `bin args...` of pkg on Node 22 through npx, in a scratch
// folder with cliEnv's environment, bounded by interopTimeout, and
// returns its exit code, stdout and stderr (ANSI escapes removed). It
// fails the test when the tool cannot be run or does not end in time.
func npxTool(t *testing.T, npx, pkg, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), interopTimeout)
	defer cancel()
	full := append([]string{"-y", "-p", skillsCLINode, "-p", pkg, "--", bin}, args...)
	cmd := exec.CommandContext(ctx, npx, full...)
	cmd.Dir = t.TempDir()
	cmd.Env = cliEnv(t, nil)
	cmd.WaitDelay = 10 * time.Second // do not hang on a child holding a pipe
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	t.Logf("npx %s: %v in %s", strings.Join(full, " "), errOrOK(err), time.Since(start).Round(time.Millisecond))
	if ctx.Err() != nil {
		t.Fatalf("npx %s did not end within %s (%v):\nstdout:\n%s\nstderr:\n%s", bin, interopTimeout, err, out.String(), errOut.String())
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("npx %s: %v", bin, err)
	}
	return code, ansiRE.ReplaceAllString(out.String(), ""), ansiRE.ReplaceAllString(errOut.String(), "")
}

// inspectorRun is what one `mcp-inspector --cli URL --method skills/list
// --verify` run gave.
type inspectorRun struct {
	code           int
	stdout, stderr string
	reports        []skillReport // stdout's NDJSON, one per skill
}

// skillReport is the Inspector's --verify report of one skill.
type skillReport struct {
	URI         string            `json:"uri"`
	Name        string            `json:"name"`
	OK          bool              `json:"ok"`
	Outcome     string            `json:"outcome"`
	Conformance []json.RawMessage `json:"conformance"`
	Frontmatter []json.RawMessage `json:"frontmatter"`
	Files       []fileReport      `json:"files"`
}

// fileReport is the verdict on one file of a skillReport.
type fileReport struct {
	URI            string `json:"uri"`
	Status         string `json:"status"`
	ExpectedDigest string `json:"expectedDigest"`
	ActualDigest   string `json:"actualDigest"`
	ExpectedSize   int64  `json:"expectedSize"`
	ActualSize     int64  `json:"actualSize"`
}

// inspectorVerify runs the Inspector's CLI against the MCP endpoint u in
// era: skills/list over every page, then --verify reads every file of
// every skill and checks its size and digest; --require-digests fails a
// skill that lists no digests. --stored-auth-only keeps it from starting
// an interactive OAuth login when the endpoint answers 401. extra goes
// last (so a variadic --header takes nothing else).
func inspectorVerify(t *testing.T, npx, u, era string, extra ...string) inspectorRun {
	t.Helper()
	args := append([]string{"--cli", u, "--transport", "http", "--method", "skills/list",
		"--verify", "--require-digests", "--stored-auth-only", "--protocol-era", era}, extra...)
	var r inspectorRun
	r.code, r.stdout, r.stderr = npxTool(t, npx, inspectorPkg, inspectorBin, args...)
	for line := range strings.Lines(r.stdout) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var rep skillReport
		if err := json.Unmarshal([]byte(line), &rep); err != nil {
			t.Errorf("Inspector stdout line is not a JSON report: %v\n%s", err, line)
			continue
		}
		r.reports = append(r.reports, rep)
	}
	return r
}

// verifiedRE is the Inspector's summary line when every skill passed.
var verifiedRE = regexp.MustCompile(`(?m)^Verified (\d+) skills? and (\d+) files?: no conformance errors\.$`)

// nodeWarningRE is a warning line of Node itself, such as the
// MaxListenersExceededWarning the Inspector's client triggers in the
// legacy era after some 1,500 requests, and the hint that follows it.
var nodeWarningRE = regexp.MustCompile("^(\\(node:\\d+\\) \\w*Warning: |\\(Use `node --trace-warnings)")

// summary is the Inspector's stderr without the warnings of npm (its
// EBADENGINE ones, as it checks the machine's Node, not Node 22) and of
// Node: its summary line, or its error envelope.
func (r inspectorRun) summary() string {
	var keep []string
	dropped := 0
	for line := range strings.Lines(r.stderr) {
		if strings.HasPrefix(line, "npm warn") || nodeWarningRE.MatchString(line) {
			dropped++
			continue
		}
		keep = append(keep, strings.TrimRight(line, "\n"))
	}
	if dropped > 0 {
		keep = append(keep, fmt.Sprintf("[%d warning lines of npm and Node left out]", dropped))
	}
	return strings.Join(keep, "\n")
}

// requireVerified checks that the run exited 0, that its summary says it
// verified want skills, and that it reported want skills, each ok and
// verified, with every file verified; it returns the skills' names.
func (r inspectorRun) requireVerified(t *testing.T, want int) []string {
	t.Helper()
	if r.code != inspectorOK {
		t.Fatalf("Inspector exited %d, want %d (every skill verified)\nstderr:\n%s\nstdout:\n%s", r.code, inspectorOK, r.summary(), head(r.stdout, 4000))
	}
	m := verifiedRE.FindStringSubmatch(r.stderr)
	if m == nil || m[1] != strconv.Itoa(want) {
		t.Errorf("Inspector summary does not say it verified %d skills:\n%s", want, r.summary())
	}
	if len(r.reports) != want {
		t.Errorf("Inspector reported %d skills on stdout, want %d", len(r.reports), want)
	}
	var names []string
	files := 0
	for _, rep := range r.reports {
		names = append(names, rep.Name)
		files += len(rep.Files)
		if !rep.OK || rep.Outcome != "verified" || len(rep.Conformance) != 0 || len(rep.Frontmatter) != 0 {
			t.Errorf("skill %s: ok %v, outcome %q, conformance %s, frontmatter %s; want ok, verified, no issues",
				rep.URI, rep.OK, rep.Outcome, rep.Conformance, rep.Frontmatter)
		}
		for _, f := range rep.Files {
			if f.Status != "verified" {
				t.Errorf("skill %s: file %s is %q, want verified", rep.URI, f.URI, f.Status)
			}
		}
	}
	if m != nil && m[2] != strconv.Itoa(files) {
		t.Errorf("Inspector summary counts %s files, its reports %d", m[2], files)
	}
	slices.Sort(names)
	return names
}

// head is s cut to n bytes.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("\n[... %d more bytes]", len(s)-n)
}

// indexNames are the names of the skills the RFC index under base lists
// with auth, sorted.
func indexNames(t *testing.T, base, auth string) []string {
	t.Helper()
	var names []string
	for _, s := range fixture.GetIndex(t, base, auth).Skills {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return names
}

// mcpPost sends one modern (2026-07-28, stateless) JSON-RPC request to
// the MCP endpoint u with the Authorization header auth ("" for none) and
// returns the HTTP response and its body.
func mcpPost(t *testing.T, u, auth, method string, params map[string]any) (*http.Response, []byte) {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modernRevision,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "skillserver-e2e", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", modernRevision)
	req.Header.Set("Mcp-Method", method)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	return fixture.Send(t, req)
}

// listPage is one page of skills/list.
type listPage struct {
	Result *struct {
		Skills []struct {
			URI string `json:"uri"`
		} `json:"skills"`
		NextCursor *string `json:"nextCursor"`
	} `json:"result"`
	Error json.RawMessage `json:"error"`
}

// TestMCPInspectorExample verifies the example tree with the MCP
// Inspector in each protocol era: it exits 0, says it verified the 5
// skills, and reports each of them ok, every file's digest and size
// matching the bytes resources/read returned, and the skills it saw are
// those of the RFC index.
func TestMCPInspectorExample(t *testing.T) {
	npx := requireInterop(t)
	skills, agents := exampleTree(t)
	ts := startServer(t, "--skills", skills, "--agents", agents)
	want := indexNames(t, ts.URL, "")
	if len(want) != 5 {
		t.Fatalf("the example tree's index lists %v, this test expects 5 skills", want)
	}
	for _, era := range inspectorEras {
		t.Run(era, func(t *testing.T) {
			r := inspectorVerify(t, npx, ts.URL+"/mcp", era)
			t.Logf("Inspector (%s) exited %d; stderr:\n%s\nstdout:\n%s", era, r.code, r.summary(), r.stdout)
			if got := r.requireVerified(t, len(want)); !slices.Equal(got, want) {
				t.Errorf("Inspector verified %v, the index lists %v", got, want)
			}
		})
	}
}

// conformancePassedRE is the conformance suite's result line.
var conformancePassedRE = regexp.MustCompile(`(?m)^Passed: (\d+)/(\d+), (\d+) failed`)

// TestMCPConformance runs the three server scenarios of the skills
// extension's conformance suite on the example tree, on the modern wire
// (the default, 2026-07-28, where the cache attributes and the wire schema
// are checked too) and on the legacy one (2025-11-25, initialize and a
// session). The suite exits 0 even when every check is SKIPPED, so each
// run must also say it passed N of N checks, N > 0, and 0 failed.
func TestMCPConformance(t *testing.T) {
	npx := requireInterop(t)
	skills, agents := exampleTree(t)
	ts := startServer(t, "--skills", skills, "--agents", agents)
	for _, wire := range []struct {
		name string
		args []string
	}{
		{"modern", nil},
		{"legacy", []string{"--spec-version", "2025-11-25", "--force"}},
	} {
		for _, scenario := range []string{"sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory"} {
			t.Run(wire.name+"/"+scenario, func(t *testing.T) {
				args := append([]string{"server", "--url", ts.URL + "/mcp", "--scenario", scenario}, wire.args...)
				code, stdout, stderr := npxTool(t, npx, conformancePkg, conformanceBin, args...)
				out := stdout + stderr
				m := conformancePassedRE.FindStringSubmatch(out)
				if code != 0 || m == nil || m[1] != m[2] || m[1] == "0" || m[3] != "0" {
					t.Fatalf("%s exited %d, result %q: want exit 0 and N/N passed, N > 0, 0 failed\n%s", scenario, code, m, out)
				}
				for line := range strings.Lines(out) {
					if strings.Contains(line, "FAILURE") || strings.Contains(line, "WARNING") {
						t.Errorf("%s: %s", scenario, strings.TrimSpace(line))
					}
				}
				t.Logf("%s (%s wire): %s", scenario, wire.name, m[0])
			})
		}
	}
}

// TestMCPInspectorPaging verifies a generated tree of 1,000 skills served
// 100 to a page of skills/list, so the Inspector follows nine cursors:
// it must verify all 1,000 (its budget raised above its default of 256),
// in the modern and the legacy era. The tree's resources are kept small
// (16 to 256 bytes each), so the whole tree is a few MiB.
func TestMCPInspectorPaging(t *testing.T) {
	npx := requireInterop(t)
	const skillCount, pageSize = 1000, 100
	tree, _, err := benchtree.OpenOrGenerateSpec(filepath.Join(t.TempDir(), "tree"),
		benchtree.Spec{Skills: skillCount, Agents: 1, MinResource: 16, MaxResource: 256})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("generated %d skills (%d versions, %d with resources): %d files, %d bytes",
		tree.Skills, tree.SkillVersions, tree.SkillsWithResources, tree.Files, tree.Bytes)
	ts := startServer(t, "--skills", filepath.Join(tree.Dir, "skills"), "--agents", filepath.Join(tree.Dir, "agents"),
		"--mcp-page-size", strconv.Itoa(pageSize))
	want := indexNames(t, ts.URL, "")
	if len(want) != skillCount {
		t.Fatalf("the index lists %d skills, want %d", len(want), skillCount)
	}

	// The server does page: the first page holds pageSize skills and a
	// cursor.
	resp, body := mcpPost(t, ts.URL+"/mcp", "", "skills/list", nil)
	var page listPage
	if err := json.Unmarshal(body, &page); err != nil || resp.StatusCode != http.StatusOK || page.Result == nil ||
		len(page.Result.Skills) != pageSize || page.Result.NextCursor == nil || *page.Result.NextCursor == "" {
		t.Fatalf("skills/list with --mcp-page-size %d: status %d (%v), want %d skills and a nextCursor:\n%s",
			pageSize, resp.StatusCode, err, pageSize, head(string(body), 2000))
	}

	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			start := time.Now()
			r := inspectorVerify(t, npx, ts.URL+"/mcp", era, "--skill-catalog-max-skills", "2000")
			t.Logf("Inspector (%s) exited %d after %s; stderr:\n%s", era, r.code, time.Since(start).Round(time.Millisecond), r.summary())
			if got := r.requireVerified(t, skillCount); !slices.Equal(got, want) {
				missing, extra := diffNames(want, got)
				t.Errorf("Inspector verified %d skills, the index lists %d: missing %v, not in the index %v", len(got), len(want), missing, extra)
			}
		})
	}
}

// diffNames is what of sorted want is not in sorted got, and the reverse.
func diffNames(want, got []string) (missing, extra []string) {
	for _, n := range want {
		if _, ok := slices.BinarySearch(got, n); !ok {
			missing = append(missing, n)
		}
	}
	for _, n := range got {
		if _, ok := slices.BinarySearch(want, n); !ok {
			extra = append(extra, n)
		}
	}
	return missing, extra
}

// TestMCPInspectorPrivateFeed verifies a private feed: the Inspector
// passes with a read token in the path (/t/<token>/mcp) and in an
// Authorization: Bearer header, in the modern and the legacy era; the
// whole-tree token sees the 5 skills, the token scoped to one skill
// exactly that one. Without a token the endpoint answers 401 and the
// Inspector fails. No secret reaches the server's log.
func TestMCPInspectorPrivateFeed(t *testing.T) {
	npx := requireInterop(t)
	const scoped = "code-review"
	skills, agents := exampleTree(t)
	tokens := filepath.Join(t.TempDir(), "tokens")
	fixture.WriteTokens(t, tokens, "# read tokens of the MCP test\nall "+fixture.AllSecret+" *\none "+fixture.NewSecret+" "+scoped+"\n")
	ts := startServer(t, "--skills", skills, "--agents", agents, "--read-tokens-file", tokens)
	all := indexNames(t, ts.URL, "Bearer "+fixture.AllSecret)
	if len(all) != 5 {
		t.Fatalf("the whole-tree token's index lists %v, this test expects 5 skills", all)
	}

	for _, tc := range []struct {
		name, secret string
		want         []string
	}{
		{"whole tree", fixture.AllSecret, all},
		{"one skill", fixture.NewSecret, []string{scoped}},
	} {
		for _, era := range []string{"modern", "legacy"} {
			t.Run(tc.name+"/path/"+era, func(t *testing.T) {
				r := inspectorVerify(t, npx, ts.URL+"/t/"+tc.secret+"/mcp", era)
				t.Logf("Inspector (%s, token in the path) exited %d; stderr:\n%s", era, r.code, r.summary())
				if got := r.requireVerified(t, len(tc.want)); !slices.Equal(got, tc.want) {
					t.Errorf("Inspector verified %v, want %v", got, tc.want)
				}
			})
			t.Run(tc.name+"/header/"+era, func(t *testing.T) {
				r := inspectorVerify(t, npx, ts.URL+"/mcp", era, "--header", "Authorization: Bearer "+tc.secret)
				t.Logf("Inspector (%s, token in a header) exited %d; stderr:\n%s", era, r.code, r.summary())
				if got := r.requireVerified(t, len(tc.want)); !slices.Equal(got, tc.want) {
					t.Errorf("Inspector verified %v, want %v", got, tc.want)
				}
			})
		}
	}

	t.Run("no token", func(t *testing.T) {
		resp, body := mcpPost(t, ts.URL+"/mcp", "", "skills/list", nil)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("skills/list without a token: HTTP %d, want 401:\n%s", resp.StatusCode, body)
		}
		for _, era := range []string{"modern", "legacy"} {
			r := inspectorVerify(t, npx, ts.URL+"/mcp", era)
			t.Logf("Inspector (%s) without a token exited %d; stderr:\n%s", era, r.code, r.summary())
			if r.code == inspectorOK || len(r.reports) != 0 || !strings.Contains(r.stderr, "auth_required") {
				t.Errorf("Inspector (%s) without a token exited %d with %d reports, want a failure (auth_required) and none:\n%s",
					era, r.code, len(r.reports), r.summary())
			}
		}
	})
	fixture.AssertNoSecret(t, ts)
}
