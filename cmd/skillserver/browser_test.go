package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"gocloud.dev/blob"

	"github.com/skillserver/skillserver/internal/fixture"
)

// The HTML catalogue in a real browser: headless Chromium driven over
// the DevTools protocol (chromedp), against the real program.

const (
	// axeCorePkg is the accessibility checker injected into each page.
	axeCorePkg = "axe-core@4.14.1"
	// browserTimeout bounds one browser session of a test.
	browserTimeout = 3 * time.Minute
	// extraSkills are generated so that the catalogue spans pages.
	extraSkills = 150
)

// requireBrowser returns the Chromium to drive, skipping when none is
// installed unless SKILLSERVER_BROWSER_TEST=1 (.ci/run sets it) asks for
// the test, which then fails.
func requireBrowser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("SKILLSERVER_BROWSER_TEST") == "1" {
		t.Fatal("SKILLSERVER_BROWSER_TEST=1 but no chromium on PATH (apt-get install chromium)")
	}
	t.Skip("browser test: no chromium on PATH; install it and set SKILLSERVER_BROWSER_TEST=1 (.ci/run does)")
	return ""
}

// browser starts a fresh headless Chromium and returns a context of one
// tab in it; cancelling the test stops the browser.
func browser(t *testing.T, chromium string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	ctx, cancel := context.WithTimeout(t.Context(), browserTimeout)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start %s: %v", chromium, err)
	}
	return bctx
}

// browse runs steps in the tab of ctx.
func browse(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

// evalJS evaluates js in the page of ctx.
func evalJS[T any](t *testing.T, ctx context.Context, js string, opts ...chromedp.EvaluateOption) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, opts...))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// cdpCall sends a DevTools command to the tab of ctx.
func cdpCall[P, R any](t *testing.T, ctx context.Context, cmd cdp.Command[P, R], params P) {
	t.Helper()
	if _, err := chromedp.Call(ctx, cmd, params); err != nil {
		t.Fatal(err)
	}
}

// watch records what a page does that the test must see: dialogs (and
// dismisses them), console messages and uncaught exceptions.
type watch struct {
	mu      sync.Mutex
	dialogs []string
	console []string
}

func watchPage(t *testing.T, ctx context.Context) *watch {
	t.Helper()
	w := &watch{}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	console := chromedp.Console(ctx)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			w.mu.Lock()
			w.dialogs = append(w.dialogs, string(ev.Type)+": "+ev.Message)
			w.mu.Unlock()
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{})
		}
	}()
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			w.mu.Lock()
			w.console = append(w.console, m.String())
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *watch) check(t *testing.T, where string) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.dialogs)+len(w.console) > 0 {
		t.Errorf("%s: the page opened dialogs %q and wrote to the console %q", where, w.dialogs, w.console)
	}
}

// evilSkill carries script, event handlers and javascript: links in its
// description, tags and body; each would set window.__pwned.
const evilSkill = `---
name: evil-payloads
description: "Payloads <script>window.__pwned='description'</script><img src=x onerror=\"window.__pwned='desc-img'\"> javascript:window.__pwned='desc'"
metadata:
  tags: "<script>window.__pwned='tag'</script>, <img src=x onerror=window.__pwned='tag-img'>, payload"
---
# Evil <img src=x onerror="window.__pwned='title'">

<script>window.__pwned = 'body-script'</script>
<img src=x onerror="window.__pwned='body-img'">
<svg onload="window.__pwned='svg'"><circle r="1"/></svg>
<iframe src="javascript:window.__pwned='iframe'"></iframe>
<a href="javascript:window.__pwned='raw-link'" id="raw">raw link</a>
<style>body{display:none}</style>
<div style="position:fixed;inset:0;background:red">overlay</div>

[click me](javascript:window.__pwned='md-link')
[also me](JaVaScRiPt:window.__pwned='md-link-case')
![remote image](http://127.0.0.2:9/tracker.png)
<details open ontoggle="window.__pwned='toggle'">x</details>
<body onload="window.__pwned='body'">
`

// browserTree is the example tree plus the evil skill and extraSkills
// generated ones.
func browserTree(t *testing.T) (skills, agents string) {
	t.Helper()
	skills, agents = fixture.ExampleTree(t, "../..")
	fixture.WriteFile(t, filepath.Join(skills, "evil-payloads", "SKILL.md"), evilSkill, 0o644)
	for i := range extraSkills {
		name := fmt.Sprintf("generated-%03d", i)
		fixture.WriteFile(t, filepath.Join(skills, name, "SKILL.md"),
			"---\nname: "+name+"\ndescription: Generated skill number "+strconv.Itoa(i)+" for the catalogue's pages.\nmetadata:\n  tags: generated\n---\n# "+name+"\n", 0o644)
	}
	return skills, agents
}

// resultsH1 is the heading of a page of search results.
const resultsH1 = `//h1[starts-with(., "Results for")]`

// names lists the item names a catalogue page shows.
const namesJS = `[...document.querySelectorAll("ul.items > li h2 a")].map(a => a.textContent)`

// TestBrowserCatalogue: every item is listed across the catalogue's
// pages; a search gives the read API's ranking; a skill's page, reached
// by its link, shows its versions (newest first, latest marked), its
// files with their sizes (each link answering those bytes) and install
// lines; the script only enhances; nothing of a hostile skill runs.
func TestBrowserCatalogue(t *testing.T) {
	chromium := requireBrowser(t)
	skills, agents := browserTree(t)
	ts := startServer(t, "--skills", skills, "--agents", agents)
	ctx := browser(t, chromium)
	w := watchPage(t, ctx)

	// Every item, across the pages, in the read API's order.
	want := apiNames(t, ts, "/api/v1/skills", "")
	want = append(want, apiNames(t, ts, "/api/v1/subagents", "")...)
	var listed []string
	next := ts.URL + "/"
	for pages := 0; next != ""; pages++ {
		if pages > 10 {
			t.Fatal("the catalogue's pages do not end")
		}
		browse(t, ctx, chromedp.Navigate(next))
		listed = append(listed, evalJS[[]string](t, ctx, namesJS)...)
		next = evalJS[string](t, ctx, `(document.querySelector("a[rel=next]")||{}).href||""`)
	}
	if !slices.Equal(listed, want) {
		t.Errorf("the catalogue lists %d items %q,\nwant the %d of the read API %q", len(listed), listed, len(want), want)
	}

	// Search by typing into the form: the read API's ranking.
	browse(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.SendKeys(chromedp.CSS("#q"), "kube"),
		chromedp.Click(chromedp.CSS("button[type=submit]"), chromedp.NodeVisible), chromedp.WaitVisible(resultsH1))
	results, title := evalJS[[]string](t, ctx, namesJS), evalJS[string](t, ctx, "document.title")
	if wantHits := apiNames(t, ts, "/api/v1/skills", "kube"); len(wantHits) == 0 || !slices.Equal(results, wantHits) || !strings.HasPrefix(title, "kube ") {
		t.Errorf("searching kube lists %q (title %q), want %q (GET /api/v1/skills?q=kube)", results, title, wantHits)
	}

	// Follow the link to the skill's page.
	browse(t, ctx, chromedp.Click(chromedp.CSS(`ul.items a[href$="/ui/skills/k8s-deploy"]`), chromedp.NodeVisible),
		chromedp.WaitVisible(chromedp.CSS("#versions")))
	h1 := evalJS[string](t, ctx, `document.querySelector("h1").textContent`)
	versions := evalJS[[]string](t, ctx, `[...document.querySelectorAll("table[aria-labelledby=versions] tbody tr")].map(tr => tr.cells[0].firstChild.textContent)`)
	latest := evalJS[[]string](t, ctx, `[...document.querySelectorAll("table[aria-labelledby=versions] tbody tr")].filter(tr => tr.querySelector(".latest")).map(tr => tr.cells[0].firstChild.textContent)`)
	current := evalJS[string](t, ctx, `document.querySelector("[aria-current=page]").textContent`)
	files := evalJS[[]string](t, ctx, `[...document.querySelectorAll("table[aria-labelledby=files] tbody a")].map(a => a.textContent)`)
	sizes := evalJS[[]string](t, ctx, `[...document.querySelectorAll("table[aria-labelledby=files] tbody data")].map(d => d.value)`)
	hrefs := evalJS[[]string](t, ctx, `[...document.querySelectorAll("table[aria-labelledby=files] tbody a")].map(a => a.href)`)
	lines := evalJS[[]string](t, ctx, `[...document.querySelectorAll("pre.install code")].map(c => c.textContent)`)
	copyButtons := evalJS[int](t, ctx, `document.querySelectorAll("pre.install button").length`)
	if h1 != "k8s-deploy" || !slices.Equal(versions, []string{"2.0.0-rc.1", "1.2.0", "1.0.0"}) || !slices.Equal(latest, []string{"1.2.0"}) || current != "1.2.0" {
		t.Errorf("skill page: h1 %q, versions %q (latest %q, shown %q); want k8s-deploy, 2.0.0-rc.1 1.2.0 1.0.0, latest and shown 1.2.0", h1, versions, latest, current)
	}
	if !slices.Equal(files, []string{"archive.zip", "SKILL.md", "assets/logo.png", "scripts/deploy.sh"}) || len(sizes) != len(files) || len(hrefs) != len(files) {
		t.Fatalf("files %q, sizes %q", files, sizes)
	}
	for i, href := range hrefs {
		resp, body := ts.Get(t, href)
		if resp.StatusCode != http.StatusOK || strconv.Itoa(len(body)) != sizes[i] {
			t.Errorf("%s (%s): %d, %d bytes; the page says %s", files[i], href, resp.StatusCode, len(body), sizes[i])
		}
	}
	for _, wantLine := range []string{"npx skills add " + ts.URL + "/skill/k8s-deploy", "npx skills add " + ts.URL, "curl -fL -o k8s-deploy-1.2.0.zip '" + hrefs[0] + "'"} {
		if !slices.Contains(lines, wantLine) {
			t.Errorf("install lines %q lack %q", lines, wantLine)
		}
	}
	if copyButtons != len(lines) {
		t.Errorf("%d copy buttons for %d install lines: the script did not run", copyButtons, len(lines))
	}

	// A hostile skill: its page and its catalogue entries run nothing.
	const pwnedJS = `typeof window.__pwned === "undefined" ? "" : String(window.__pwned)`
	for _, u := range []string{ts.URL + "/ui/skills/evil-payloads", ts.URL + "/?q=payloads", ts.URL + "/?tag=payload"} {
		browse(t, ctx, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS("footer")))
		if pwned, display := evalJS[string](t, ctx, pwnedJS), evalJS[string](t, ctx, `getComputedStyle(document.body).display`); pwned != "" || display == "none" {
			t.Errorf("%s: a payload ran (window.__pwned = %q, body display %q)", u, pwned, display)
		}
		if n := evalJS[int](t, ctx, `document.querySelectorAll("ul.items li, h1").length`); n == 0 {
			t.Errorf("%s shows nothing", u)
		}
	}
	browse(t, ctx, chromedp.Navigate(ts.URL+"/ui/skills/evil-payloads"), chromedp.WaitReady(chromedp.CSS("footer")),
		chromedp.Click(`//article//*[contains(text(), "click me")]`, chromedp.NodeVisible),
		chromedp.Click(`//article//*[contains(text(), "also me")]`, chromedp.NodeVisible))
	if pwned := evalJS[string](t, ctx, pwnedJS); pwned != "" {
		t.Errorf("clicking the hostile links ran %q", pwned)
	}
	w.check(t, "catalogue, search and skill pages")
}

// apiNames lists the names the read API ranks for q, every page of them.
func apiNames(t *testing.T, ts *testServer, path, q string) []string {
	t.Helper()
	var out []string
	for skip := 0; ; skip += 100 {
		_, body := ts.Get(t, path+"?take=100&skip="+strconv.Itoa(skip)+"&q="+url.QueryEscape(q))
		var hits []struct{ Name string }
		if err := json.Unmarshal(body, &hits); err != nil {
			t.Fatalf("%s: %v: %s", path, err, body)
		}
		for _, h := range hits {
			out = append(out, h.Name)
		}
		if len(hits) < 100 {
			return out
		}
	}
}

// TestBrowserWithoutJavaScript: with script execution off, the
// catalogue lists, the search form searches, links lead to the skill's
// page and its install lines are there; no enhancement appears.
func TestBrowserWithoutJavaScript(t *testing.T) {
	chromium := requireBrowser(t)
	skills, agents := fixture.ExampleTree(t, "../..")
	ts := startServer(t, "--skills", skills, "--agents", agents)
	ctx := browser(t, chromium)
	if os.Getenv("UPDATE_GOLDEN") == "1" { // make golden: the README's pictures of the example tree
		screenshot(t, ctx, ts.URL+"/", "../../docs/catalogue.png")
		screenshot(t, ctx, ts.URL+"/ui/skills/k8s-deploy", "../../docs/skill-page.png")
	}
	cdpCall(t, ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
	browse(t, ctx, chromedp.Navigate(ts.URL+"/"))
	// Evaluate runs in the DevTools' own world, not as the page's script.
	if n := evalJS[int](t, ctx, `document.querySelectorAll("ul.items > li").length`); n != 7 {
		t.Errorf("without JavaScript the catalogue lists %d items, want the example tree's 7", n)
	}
	browse(t, ctx, chromedp.SendKeys(chromedp.CSS("#q"), "deploy"), chromedp.Click(chromedp.CSS("button[type=submit]"), chromedp.NodeVisible),
		chromedp.WaitVisible(resultsH1))
	if loc, names := evalJS[string](t, ctx, "location.search"), evalJS[[]string](t, ctx, namesJS); !strings.Contains(loc, "q=deploy") || len(names) == 0 || names[0] != "k8s-deploy" {
		t.Errorf("without JavaScript, searching deploy went to %q and lists %q", loc, names)
	}
	browse(t, ctx, chromedp.Click(chromedp.CSS(`ul.items a[href$="/ui/skills/k8s-deploy"]`), chromedp.NodeVisible),
		chromedp.WaitVisible(chromedp.CSS("#install")))
	lines := evalJS[[]string](t, ctx, `[...document.querySelectorAll("pre.install code")].map(c => c.textContent)`)
	buttons := evalJS[int](t, ctx, `document.querySelectorAll("pre.install button").length`)
	if !slices.Contains(lines, "npx skills add "+ts.URL+"/skill/k8s-deploy") || buttons != 0 {
		t.Errorf("without JavaScript: install lines %q, %d copy buttons (want the lines, none)", lines, buttons)
	}
}

// TestBrowserAccessibility: axe-core finds no violation on any page, in
// light and dark mode, on a desktop and a phone.
func TestBrowserAccessibility(t *testing.T) {
	chromium := requireBrowser(t)
	axe := axeSource(t)
	skills, agents := browserTree(t)
	fixture.WriteFile(t, filepath.Join(skills, "broken", "SKILL.md"), "---\nname: not-broken\ndescription: x\n---\n", 0o644)
	const admin = "admin-token-for-the-browser"
	ts := startServerEnv(t, map[string]string{"SKILLSERVER_ADMIN_TOKEN": admin}, "--skills", skills, "--agents", agents)
	ctx := browser(t, chromium)
	cdpCall(t, ctx, network.Enable, network.EnableParams{})
	cdpCall(t, ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": "Bearer " + admin}})
	pages := []string{"/", "/?q=review", "/?tag=generated&page=2", "/?q=nothing-matches-this", "/ui/skills/k8s-deploy", "/ui/skills/k8s-deploy/1.0.0",
		"/ui/skills/code-review", "/ui/skills/evil-payloads", "/ui/subagents/technical-support-diagnostician", "/-/problems", "/ui/skills/no-such-skill"}
	for _, mode := range []struct {
		name          string
		width, height int64
		scheme        string
	}{{"desktop, light", 1280, 900, "light"}, {"phone, dark", 390, 844, "dark"}} {
		cdpCall(t, ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: mode.width, Height: mode.height, DeviceScaleFactor: 1, Mobile: mode.width < 600})
		cdpCall(t, ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: mode.scheme}}})
		for _, p := range pages {
			browse(t, ctx, chromedp.Navigate(ts.URL+p), chromedp.WaitReady(chromedp.CSS("footer")), chromedp.Evaluate[chromedp.Void](axe))
			if evalJS[string](t, ctx, `getComputedStyle(document.body).backgroundColor`) == "" {
				t.Fatalf("%s: no style", p)
			}
			res := evalJS[axeResult](t, ctx, `axe.run(document, {resultTypes: ["violations"]}).then(r => ({violations: r.violations, passes: r.passes.length}))`, chromedp.EvalAwaitPromise)
			if res.Passes == 0 {
				t.Errorf("%s (%s): axe checked nothing", p, mode.name)
			}
			for _, v := range res.Violations {
				var targets []string
				for _, n := range v.Nodes {
					targets = append(targets, strings.Join(n.Target, " ")+": "+n.Summary)
				}
				t.Errorf("%s (%s): axe %s (%s): %s\n  %s", p, mode.name, v.ID, v.Impact, v.Help, strings.Join(targets, "\n  "))
			}
		}
	}
}

type axeResult struct {
	Passes     int `json:"passes"`
	Violations []struct {
		ID, Impact, Help string
		Nodes            []struct {
			Target  []string `json:"target"`
			Summary string   `json:"failureSummary"`
		} `json:"nodes"`
	} `json:"violations"`
}

// axeSource installs axe-core into a scratch folder with npm and
// returns its script.
func axeSource(t *testing.T) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("the browser test needs npm for %s: %v", axeCorePkg, err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), interopTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", dir, axeCorePkg)
	cmd.Env = cliEnv(t, nil)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s: %v\n%s", axeCorePkg, err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// screenshot saves a picture of u for the docs.
func screenshot(t *testing.T, ctx context.Context, u, file string) {
	t.Helper()
	cdpCall(t, ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: 1100, Height: 800, DeviceScaleFactor: 1})
	cdpCall(t, ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}}})
	browse(t, ctx, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS("footer")))
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

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
	skills, agents := fixture.ExampleTree(t, "../..")
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
		for _, f := range evalJS[[][2]string](t, ctx, `[...document.querySelectorAll("table[aria-labelledby=files] tbody a")].map(a => [a.textContent, a.href])`) {
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
		if n := evalJS[int](t, ctx, `document.querySelectorAll("pre.install button").length`); n == 0 {
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
	doc, err := os.ReadFile("../../docs/operations.md")
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
	mustWrite(t, filepath.Join(skills, "shipper", "SKILL.md"), skillDoc("shipper", "version: 1.0.0\n"))
	for name, body := range files {
		mustWrite(t, filepath.Join(skills, "shipper", name), body)
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
