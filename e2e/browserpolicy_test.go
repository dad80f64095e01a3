//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"gocloud.dev/blob"

	"github.com/skillserver/skillserver/internal/fixture"
)

// shippedFiles are resources of a skill that would run script on this
// origin if a browser ever ran them as the server's own: a .js that an
// injected script tag could load, and an .html and an .svg opened
// directly. Each sets window.__pwned.
var shippedFiles = map[string]string{
	"scripts/pwn.js": "window.__pwned = 'js';\n",
	"pwn.html":       "<!doctype html><title>shipped</title><p id=shipped>shipped page</p><script>window.__pwned = 'html'; document.title = 'pwned'</script><img src=x onerror=\"window.__pwned='html-img'\">\n",
	"pwn.svg":        "<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"window.__pwned='svg-onload'\"><script>window.__pwned = 'svg'</script><circle id=\"shipped\" r=\"4\"/></svg>\n",
}

// violationsJS, run before any of a page's own script, records every
// Content-Security-Policy violation of the page.
const violationsJS = `window.__violations = [];
document.addEventListener("securitypolicyviolation", e => window.__violations.push(e.effectiveDirective + " " + e.blockedURI));`

// injectJS appends a script tag for %s (with integrity %s, unless
// empty) and waits until it has loaded or failed, and, if it failed for
// the policy, for the violation event too.
const injectJS = `new Promise(resolve => {
  const out = {loaded: false, failed: false, violation: ""};
  let n = 0;
  const done = () => { if (++n === %[3]d) resolve(out); };
  document.addEventListener("securitypolicyviolation", e => { out.violation = e.effectiveDirective + " " + e.blockedURI; done(); }, {once: true});
  const s = document.createElement("script");
  s.src = %[1]q;
  if (%[2]q) s.integrity = %[2]q;
  s.onload = () => { out.loaded = true; resolve(out); };
  s.onerror = () => { out.failed = true; done(); };
  document.head.appendChild(s);
})`

type injected struct {
	Loaded, Failed bool
	Violation      string
}

// TestBrowserScriptPolicy: on the catalogue's pages only the page's own
// script runs. A script tag injected into a page for a skill's .js
// resource, served by this origin, is refused by the policy (a
// securitypolicyviolation event) and runs nothing; with the page's own
// script's integrity copied onto it, subresource integrity refuses it.
// The page's script still runs and nothing of the page itself violates
// the policy. A skill's .html and .svg resources opened directly run no
// script. All of it on an open feed and under a path token.
func TestBrowserScriptPolicy(t *testing.T) {
	chromium := requireBrowser(t)
	skills, agents := fixture.ExampleTree(t, repoRoot)
	fixture.WriteFile(t, filepath.Join(skills, "shipped-script", "SKILL.md"),
		"---\nname: shipped-script\ndescription: Ships a script, an HTML page and an SVG image.\n---\n# shipped-script\n", 0o644)
	for name, body := range shippedFiles {
		fixture.WriteFile(t, filepath.Join(skills, "shipped-script", filepath.FromSlash(name)), body, 0o644)
	}
	tokens := filepath.Join(t.TempDir(), "tokens")
	fixture.WriteTokens(t, tokens, "all "+fixture.AllSecret+" *\n")
	open := startServer(t, "--skills", skills, "--agents", agents)
	private := startServer(t, "--skills", skills, "--agents", agents, "--read-tokens-file", tokens)
	ctx := browser(t, chromium)
	cdpCall(t, ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: violationsJS})
	const pwnedJS = `typeof window.__pwned === "undefined" ? "" : String(window.__pwned)`
	for _, base := range []string{open.URL, private.URL + "/t/" + fixture.AllSecret} {
		// The skill's page links each file at the URL this server serves it.
		browse(t, ctx, chromedp.Navigate(base+"/ui/skills/shipped-script"), chromedp.WaitReady(chromedp.CSS("footer")))
		files := map[string]string{}
		for _, f := range evalJS[[][2]string](t, ctx, `[...document.querySelectorAll("table[aria-labelledby=files] tbody tr")].map(tr => [tr.cells[0].textContent, tr.querySelector("a.raw").href])`) {
			files[f[0]] = f[1]
		}
		for name := range shippedFiles {
			if !strings.HasPrefix(files[name], base+"/") {
				t.Fatalf("%s: the page links %s at %q, not under %s", base, name, files[name], base)
			}
		}
		if resp, body := fixture.Fetch(t, http.MethodGet, files["scripts/pwn.js"], "", ""); resp.StatusCode != http.StatusOK || string(body) != shippedFiles["scripts/pwn.js"] ||
			!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
			t.Fatalf("%s: %d %q %q: want the script, as JavaScript", files["scripts/pwn.js"], resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		// The page's own script runs (the copy buttons are its work) and
		// nothing of the page violates the policy.
		if n := evalJS[int](t, ctx, `document.querySelectorAll(".line button").length`); n == 0 {
			t.Errorf("%s: no copy button: the page's own script did not run", base)
		}
		for _, p := range []string{"/", "/ui/skills/shipped-script"} {
			browse(t, ctx, chromedp.Navigate(base+p), chromedp.WaitReady(chromedp.CSS("footer")))
			if v := evalJS[[]string](t, ctx, `window.__violations`); len(v) > 0 {
				t.Errorf("%s%s violates its own policy: %q", base, p, v)
			}
		}

		// Injected into the catalogue: refused by the policy, then, with
		// the page's own integrity copied, by subresource integrity.
		own := evalJS[string](t, ctx, `document.querySelector("script[src]").integrity`)
		if own == "" {
			t.Fatalf("%s: the page's script has no integrity attribute", base)
		}
		browse(t, ctx, chromedp.Navigate(base+"/"), chromedp.WaitReady(chromedp.CSS("footer")))
		got := evalJS[injected](t, ctx, fmt.Sprintf(injectJS, files["scripts/pwn.js"], "", 2), chromedp.EvalAwaitPromise)
		if got.Loaded || !got.Failed || got.Violation != "script-src-elem "+files["scripts/pwn.js"] {
			t.Errorf("%s: an injected <script src=%s>: %+v; want it refused with a script-src-elem violation", base, files["scripts/pwn.js"], got)
		}
		got = evalJS[injected](t, ctx, fmt.Sprintf(injectJS, files["scripts/pwn.js"], own, 1), chromedp.EvalAwaitPromise)
		if got.Loaded || !got.Failed {
			t.Errorf("%s: an injected <script src=%s integrity=%s>: %+v; want it refused", base, files["scripts/pwn.js"], own, got)
		}
		if pwned := evalJS[string](t, ctx, pwnedJS); pwned != "" {
			t.Errorf("%s: the skill's script ran on the catalogue (window.__pwned = %q)", base, pwned)
		}

		// Opened directly, the .html and .svg resources show but run nothing.
		for _, name := range []string{"pwn.html", "pwn.svg"} {
			browse(t, ctx, chromedp.Navigate(files[name]))
			if shown := evalJS[bool](t, ctx, `document.getElementById("shipped") !== null`); !shown {
				t.Errorf("%s: %s does not render", base, name)
			}
			if pwned, title := evalJS[string](t, ctx, pwnedJS), evalJS[string](t, ctx, "document.title"); pwned != "" || title == "pwned" {
				t.Errorf("%s: %s opened directly ran script (window.__pwned = %q, title %q)", base, name, pwned, title)
			}
		}
	}
}

// beacon counts the requests a page's script makes to it.
type beacon struct {
	url  string
	mu   sync.Mutex
	hits []string
}

func newBeacon(t *testing.T) *beacon {
	t.Helper()
	b := &beacon{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.hits = append(b.hits, r.URL.Path)
		b.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	b.url = srv.URL
	return b
}

func (b *beacon) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.hits)
}

// activeFiles are files of a skill a browser runs script in when it
// opens them with their own type; each script sets the page's title and
// asks the beacon at beaconURL for its file's name, twice.
func activeFiles(beaconURL string) map[string]string {
	js := func(name string) string {
		return fmt.Sprintf(`document.title = "pwned"; fetch(%q, {mode: "no-cors"}); new Image().src = %q;`, beaconURL+"/"+name, beaconURL+"/img/"+name)
	}
	return map[string]string{
		"pwn.html": "<!doctype html><title>shipped</title><p id=shipped>shipped page</p><script>" + js("html") + "</script>\n",
		"pwn.svg":  `<svg xmlns="http://www.w3.org/2000/svg"><title>shipped</title><script>` + js("svg") + `</script><circle id="shipped" r="4"/></svg>` + "\n",
		"pwn.xml":  `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>shipped</title></head><body><p id="shipped">x</p><script>` + js("xml") + `</script></body></html>` + "\n",
	}
}

// documentedNginx is the server block docs/operations.md gives for an
// export, without its listen, server_name and root lines (the test's
// nginx sets those).
func documentedNginx(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```nginx\nserver {\n")
	block, _, ok2 := strings.Cut(block, "\n}\n```")
	if !ok || !ok2 {
		t.Fatal("docs/operations.md has no nginx server block")
	}
	var out []string
	for line := range strings.SplitSeq(block, "\n") {
		if f := strings.Fields(line); len(f) > 0 && slices.Contains([]string{"listen", "server_name", "root"}, f[0]) {
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// stockTypes is an nginx configuration with its types block swapped for
// what a host's stock MIME table says of HTML, SVG and XML.
var stockTypes = regexp.MustCompile(`(?s)types \{[^}]*\}`)

// TestBrowserExportRunsNoScript: a skill's HTML, SVG and XML files,
// exported, run no script in Chromium, however the export is served as
// docs/operations.md says: a folder behind nginx with the documented
// configuration, read from the docs, with its own types table and with a
// stock one that serves them as text/html, image/svg+xml and text/xml;
// and a bucket (a real S3 server, versitygw, with SKILLSERVER_S3_TEST=1)
// serving each object with its stored metadata, at a presigned URL.
// Each script would set the page's title and call a beacon. The same
// files on a host that serves them by extension and sets no header (as
// GitHub Pages does) do run: that shows the test would see a script run,
// and it is the risk docs/operations.md states for such hosts. Before,
// the bucket stored text/html, image/svg+xml and application/xml, and the
// documented nginx configuration set no Content-Security-Policy: both ran
// the scripts.
func TestBrowserExportRunsNoScript(t *testing.T) {
	chromium := requireBrowser(t)
	nginxBinary(t)
	bc := newBeacon(t)
	files := activeFiles(bc.url)
	skills := t.TempDir()
	fixture.WriteFile(t, filepath.Join(skills, "shipper", "SKILL.md"), fixture.SkillDoc("shipper", "version: 1.0.0\n"), 0o644)
	for name, body := range files {
		fixture.WriteFile(t, filepath.Join(skills, "shipper", name), body, 0o644)
	}
	base := "https://skills.example.com"
	dir := t.TempDir()
	runExport(t, "--skills", skills, "--base-url", base, "--out", dir)
	var keys []string // each file's artifact and latest-version file
	for key := range exportedFiles(t, dir) {
		if _, ok := files[path.Base(key)]; ok {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	if len(keys) != 2*len(files) {
		t.Fatalf("the export holds %q; want each active file twice", keys)
	}

	ctx := browser(t, chromium)
	cdpCall(t, ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorDeny})
	// ran opens u in the tab and reports whether its script ran: the
	// title it set, or a call to the beacon. A download aborts the
	// navigation and leaves the blank page.
	ran := func(t *testing.T, u string) (bool, string) {
		t.Helper()
		browse(t, ctx, chromedp.Navigate("about:blank"))
		before := bc.count()
		if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil && !strings.Contains(err.Error(), "ERR_ABORTED") {
			t.Fatalf("open %s: %v", u, err)
		}
		title := evalJS[string](t, ctx, "document.title")
		where := evalJS[string](t, ctx, "location.href")
		time.Sleep(300 * time.Millisecond) // the beacon's calls are on their way
		return title == "pwned" || bc.count() > before, fmt.Sprintf("at %s, title %q, %d beacon calls", where, title, bc.count()-before)
	}

	t.Run("plain static host", func(t *testing.T) {
		plain := httptest.NewServer(http.FileServer(http.Dir(dir)))
		t.Cleanup(plain.Close)
		for _, key := range keys {
			if ok, what := ran(t, plain.URL+urlPath(key)); !ok {
				t.Errorf("%s on a host that sets no header: no script ran (%s); the test cannot see one run", key, what)
			}
		}
	})

	t.Run("nginx", func(t *testing.T) {
		doc := documentedNginx(t)
		stock := stockTypes.ReplaceAllString(doc, "types { text/html html; image/svg+xml svg; text/xml xml; application/json json; text/markdown md; application/zip zip; }")
		if stock == doc {
			t.Fatal("the documented nginx configuration has no types block")
		}
		sites := []*site{{root: dir, extra: doc}, {root: dir, extra: stock}}
		startStaticHosts(t, sites)
		for i, s := range sites {
			for _, key := range keys {
				u := s.url + urlPath(key)
				if ok, what := ran(t, u); ok {
					t.Errorf("%s behind nginx (types %s): its script ran (%s)", key, []string{"documented", "stock"}[i], what)
				}
				resp, _ := fixture.Fetch(t, http.MethodGet, u, "", "")
				if csp := resp.Header.Get("Content-Security-Policy"); csp != "default-src 'none'; sandbox" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("%s behind nginx: Content-Security-Policy %q, X-Content-Type-Options %q", key, csp, resp.Header.Get("X-Content-Type-Options"))
				}
			}
		}
	})

	t.Run("S3", func(t *testing.T) {
		bucketURL := startS3(t)
		runExport(t, "--skills", skills, "--base-url", base, "--out", bucketURL)
		b := openBucket(t, bucketURL)
		for _, key := range keys {
			u, err := b.SignedURL(t.Context(), key, &blob.SignedURLOptions{Expiry: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			resp, body := fixture.Fetch(t, http.MethodGet, u, "", "")
			if resp.StatusCode != http.StatusOK || string(body) != files[path.Base(key)] {
				t.Fatalf("%s from S3: %s, %q", key, resp.Status, body)
			}
			if ct, cd := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"); ct != "text/plain; charset=utf-8" || cd != "attachment" {
				t.Errorf("%s from S3: Content-Type %q, Content-Disposition %q; want text to download", key, ct, cd)
			}
			if ok, what := ran(t, u); ok {
				t.Errorf("%s from S3: its script ran (%s)", key, what)
			}
		}
	})
}
