//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

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
	skills, agents = fixture.ExampleTree(t, repoRoot)
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
	files := evalJS[[]string](t, ctx, `[...document.querySelectorAll("table[aria-labelledby=files] tbody tr")].map(tr => tr.cells[0].textContent)`)
	sizes := evalJS[[]string](t, ctx, `[...document.querySelectorAll("table[aria-labelledby=files] tbody data")].map(d => d.value)`)
	hrefs := evalJS[[]string](t, ctx, `[...document.querySelectorAll("table[aria-labelledby=files] tbody a.raw")].map(a => a.href)`)
	lines := evalJS[[]string](t, ctx, `[...document.querySelectorAll("pre.install code")].map(c => c.textContent)`)
	copyButtons := evalJS[int](t, ctx, `document.querySelectorAll(".line button").length`)
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
	for _, wantLine := range []string{"npx -y -p node@22 -p skills@1.7.4 -- skills add " + ts.URL + "/skill/k8s-deploy", "npx -y -p node@22 -p skills@1.7.4 -- skills add " + ts.URL, "curl -fL -o k8s-deploy-1.2.0.zip '" + hrefs[0] + "'"} {
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
	skills, agents := fixture.ExampleTree(t, repoRoot)
	ts := startServer(t, "--skills", skills, "--agents", agents)
	ctx := browser(t, chromium)
	if os.Getenv("UPDATE_GOLDEN") == "1" { // make golden: the README's pictures of the example tree
		screenshot(t, ctx, ts.URL+"/", "../docs/catalogue.png")
		screenshot(t, ctx, ts.URL+"/ui/skills/k8s-deploy", "../docs/skill-page.png")
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
	buttons := evalJS[int](t, ctx, `document.querySelectorAll(".line button").length`)
	if !slices.Contains(lines, "npx -y -p node@22 -p skills@1.7.4 -- skills add "+ts.URL+"/skill/k8s-deploy") || buttons != 0 {
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
