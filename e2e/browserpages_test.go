//go:build e2e

package e2e

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/skillserver/skillserver/internal/fixture"
)

// The catalogue as people read it, in real Chromium: a skill's page
// (its SKILL.md as the main column, the facts and the install chooser
// beside it or, on a phone, above it), the file view, the version
// comparison, the private feed's page for a browser without a token;
// browserexport_test.go has the exported catalogue behind nginx.

// viewport sets the tab's size (a phone below 600 px) and colour scheme.
func viewport(t *testing.T, ctx context.Context, width, height int64, scheme string) {
	t.Helper()
	cdpCall(t, ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: width, Height: height, DeviceScaleFactor: 1, Mobile: width < 600})
	cdpCall(t, ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
}

// modes are the widths and colour schemes every new page is checked in.
var modes = []struct {
	name          string
	width, height int64
	scheme        string
}{
	{"1280 px, light", 1280, 900, "light"},
	{"1280 px, dark", 1280, 900, "dark"},
	{"390 px, light", 390, 844, "light"},
	{"390 px, dark", 390, 844, "dark"},
}

// checkAxe runs axe-core (its source axe) on the page of ctx and reports
// every violation.
func checkAxe(t *testing.T, ctx context.Context, axe, where string) {
	t.Helper()
	browse(t, ctx, chromedp.Evaluate[chromedp.Void](axe))
	res := evalJS[axeResult](t, ctx, `axe.run(document, {resultTypes: ["violations"]}).then(r => ({violations: r.violations, passes: r.passes.length}))`, chromedp.EvalAwaitPromise)
	if res.Passes == 0 {
		t.Errorf("%s: axe checked nothing", where)
	}
	for _, v := range res.Violations {
		var targets []string
		for _, n := range v.Nodes {
			targets = append(targets, strings.Join(n.Target, " ")+": "+n.Summary)
		}
		t.Errorf("%s: axe %s (%s): %s\n  %s", where, v.ID, v.Impact, v.Help, strings.Join(targets, "\n  "))
	}
}

// layoutJS measures a skill's page: where its parts are, whether
// anything is wider than the window, and whether a copy button covers
// any of its line.
const layoutJS = `(() => {
  const r = e => e.getBoundingClientRect();
  const side = r(document.querySelector("aside.side")), doc = r(document.querySelector("article.doc"));
  const covered = [...document.querySelectorAll(".line")].filter(l => {
    const b = l.querySelector("button"), p = l.querySelector("pre");
    if (!b || !p || p.offsetParent === null) return false;
    const x = r(b), y = r(p);
    return !(x.right <= y.left || x.left >= y.right || x.bottom <= y.top || x.top >= y.bottom);
  }).length;
  const clipped = [...document.querySelectorAll("pre.install")].filter(p => p.offsetParent !== null && p.scrollWidth > p.clientWidth + 1).length;
  return {sideLeft: side.left, sideBottom: side.bottom, sideTop: side.top, docLeft: doc.left, docRight: doc.right, docTop: doc.top,
    overflow: document.documentElement.scrollWidth - window.innerWidth, covered, clipped,
    buttons: document.querySelectorAll(".line button").length};
})()`

type layout struct {
	SideLeft, SideBottom, SideTop, DocLeft, DocRight, DocTop float64
	Overflow                                                 float64
	Covered, Clipped, Buttons                                int
}

// TestBrowserSkillPageLayout: at 1280 px the rendered SKILL.md is the
// main column with its first line on the first screen and the side
// panel to its right; at 390 px the panel is a block above it and
// nothing is wider than the phone; at both, no copy button covers its
// line and no install line is cut (they wrap); the client chooser shows
// one client's lines at a time, with JavaScript and without; the panel
// shows the compatibility, the date (and how long ago, from the script)
// and the live fetch count; axe finds nothing in light and dark mode.
func TestBrowserSkillPageLayout(t *testing.T) {
	chromium := requireBrowser(t)
	axe := axeSource(t)
	skills, agents := fixture.ExampleTree(t, repoRoot)
	ts := startServer(t, "--skills", skills, "--agents", agents)
	ctx := browser(t, chromium)
	w := watchPage(t, ctx)
	u := ts.URL + "/ui/skills/k8s-deploy"
	for _, m := range modes {
		viewport(t, ctx, m.width, m.height, m.scheme)
		browse(t, ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(".line button")))
		l := evalJS[layout](t, ctx, layoutJS)
		if m.width >= 1280 {
			if l.SideLeft < l.DocRight || l.DocTop > float64(m.height)-100 {
				t.Errorf("%s: the side panel at x=%.0f is not right of the SKILL.md (right edge %.0f), or the SKILL.md starts at y=%.0f, below the first screen", m.name, l.SideLeft, l.DocRight, l.DocTop)
			}
		} else if l.SideBottom > l.DocTop {
			t.Errorf("%s: the side panel (bottom %.0f) is not above the SKILL.md (top %.0f)", m.name, l.SideBottom, l.DocTop)
		}
		if l.Overflow > 0 || l.Covered > 0 || l.Clipped > 0 || l.Buttons == 0 {
			t.Errorf("%s: %.0f px wider than the window, %d copy buttons cover their line, %d install lines cut, %d buttons", m.name, l.Overflow, l.Covered, l.Clipped, l.Buttons)
		}
		checkAxe(t, ctx, axe, u+" ("+m.name+")")
	}

	viewport(t, ctx, 1280, 900, "light")
	shown := `[...document.querySelectorAll(".clients .panel")].filter(p => p.offsetParent !== null).map(p => p.id)`
	browse(t, ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS("dd.fetches")))
	side := evalJS[string](t, ctx, `document.querySelector("aside.side").innerText`)
	for _, want := range []string{"Needs kubectl 1.28 or later on PATH.", "ago)", "since the server started", "kubernetes"} {
		if !strings.Contains(side, want) {
			t.Errorf("the side panel lacks %q:\n%s", want, side)
		}
	}
	if got := evalJS[[]string](t, ctx, shown); !slices.Equal(got, []string{"p-skills"}) {
		t.Errorf("on opening, the chooser shows %q; want the skills CLI's lines alone", got)
	}
	browse(t, ctx, chromedp.Click(chromedp.CSS(`label[for=c-curl]`), chromedp.NodeVisible))
	if got := evalJS[[]string](t, ctx, shown); !slices.Equal(got, []string{"p-curl"}) {
		t.Errorf("after choosing curl, the chooser shows %q", got)
	}
	w.check(t, "the skill page")

	// Without JavaScript: the chooser is CSS and radio buttons.
	cdpCall(t, ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
	browse(t, ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS("#install")),
		chromedp.Click(chromedp.CSS(`label[for=c-netclaw]`), chromedp.NodeVisible))
	if got := evalJS[[]string](t, ctx, shown); !slices.Equal(got, []string{"p-netclaw"}) {
		t.Errorf("without JavaScript, choosing netclaw shows %q", got)
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll(".line button, .ago").length + (document.querySelector("dd.fetches").hidden ? 0 : 1)`); n != 0 {
		t.Errorf("without JavaScript the page shows %d enhancements", n)
	}
}

// TestBrowserFileViewAndCompare: from a skill's page, a text file opens
// in a view numbering each of its lines, whose raw link answers those
// bytes and whose line anchors work; a binary file keeps its download;
// the version row's link opens the comparison with the files added and
// SKILL.md's diff; axe finds nothing on either page in either mode.
func TestBrowserFileViewAndCompare(t *testing.T) {
	chromium := requireBrowser(t)
	axe := axeSource(t)
	skills, agents := fixture.ExampleTree(t, repoRoot)
	ts := startServer(t, "--skills", skills, "--agents", agents)
	ctx := browser(t, chromium)
	w := watchPage(t, ctx)
	viewport(t, ctx, 1280, 900, "light")
	browse(t, ctx, chromedp.Navigate(ts.URL+"/ui/skills/k8s-deploy"),
		chromedp.Click(chromedp.CSS(`td.path a[href$="/files/scripts/deploy.sh"]`), chromedp.NodeVisible), chromedp.WaitVisible(chromedp.CSS("table.code")))
	lines := evalJS[[]string](t, ctx, `[...document.querySelectorAll("table.code tbody tr")].map(tr => tr.cells[0].textContent + " " + tr.cells[1].textContent)`)
	raw := evalJS[string](t, ctx, `document.querySelector("a.rawlink").href`)
	resp, body := ts.Get(t, raw)
	want := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if resp.StatusCode != http.StatusOK || len(lines) != len(want) || len(want) < 3 {
		t.Fatalf("the view shows %d lines %q; the raw link %s answers %d with %d lines", len(lines), lines, raw, resp.StatusCode, len(want))
	}
	for i, l := range lines {
		if l != strconv.Itoa(i+1)+" "+want[i] {
			t.Errorf("line %d shows %q, the file holds %q", i+1, l, want[i])
		}
	}
	browse(t, ctx, chromedp.Click(chromedp.CSS(`a[href="#L3"]`), chromedp.NodeVisible))
	if bg := evalJS[string](t, ctx, `getComputedStyle(document.getElementById("L3")).backgroundColor`); bg == "rgba(0, 0, 0, 0)" {
		t.Error("the line an anchor names is not marked")
	}
	fileView := evalJS[string](t, ctx, "location.pathname")

	browse(t, ctx, chromedp.Navigate(ts.URL+"/ui/skills/k8s-deploy"))
	if href := evalJS[string](t, ctx, `document.querySelector('td.path a[href*="assets/logo.png"]').href`); !strings.Contains(href, "/api/v1/blobs/sha256/") {
		t.Errorf("the binary logo.png links %s; want its download", href)
	}
	browse(t, ctx, chromedp.Click(chromedp.CSS(`a[href$="/1.2.0/compare/1.0.0"]`), chromedp.NodeVisible), chromedp.WaitVisible(chromedp.CSS("pre.diff")))
	added := evalJS[[]string](t, ctx, `[...document.querySelectorAll("ul[aria-labelledby=added] a")].map(a => a.textContent)`)
	dels := evalJS[[]string](t, ctx, `[...document.querySelectorAll("pre.diff .del")].map(s => s.textContent)`)
	adds := evalJS[[]string](t, ctx, `[...document.querySelectorAll("pre.diff .add")].map(s => s.textContent)`)
	if !slices.Equal(added, []string{"assets/logo.png", "scripts/deploy.sh"}) || !slices.Contains(dels, "-  version: 1.0.0") || !slices.Contains(adds, "+  version: 1.2.0") {
		t.Errorf("the comparison of 1.0.0 and 1.2.0: added %q, removed lines %q, added lines %q", added, dels, adds)
	}
	compare := evalJS[string](t, ctx, "location.pathname")
	w.check(t, "the file view and the comparison")

	for _, m := range modes {
		viewport(t, ctx, m.width, m.height, m.scheme)
		for _, p := range []string{fileView, "/ui/skills/k8s-deploy/1.2.0/files/assets/logo.png", compare, "/ui/skills/k8s-deploy/2.0.0-rc.1/compare/1.2.0"} {
			browse(t, ctx, chromedp.Navigate(ts.URL+p), chromedp.WaitReady(chromedp.CSS("footer")))
			if o := evalJS[float64](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); o > 0 {
				t.Errorf("%s (%s): %.0f px wider than the window", p, m.name, o)
			}
			checkAxe(t, ctx, axe, p+" ("+m.name+")")
		}
	}
}

// TestBrowserPrivateFeedPage: a browser on a private feed without a
// token gets a page (401) that says how to open it, with its style and
// script (which load without a token), and no other error in the
// console; the address it gives, with a
// token in it, opens the catalogue; axe finds nothing on it.
func TestBrowserPrivateFeedPage(t *testing.T) {
	chromium := requireBrowser(t)
	axe := axeSource(t)
	ts, _ := startPrivate(t)
	ctx := browser(t, chromium)
	w := watchPage(t, ctx)
	for _, m := range modes {
		viewport(t, ctx, m.width, m.height, m.scheme)
		browse(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("h1")))
		checkAxe(t, ctx, axe, "the private feed's page ("+m.name+")")
	}
	h1 := evalJS[string](t, ctx, `document.querySelector("h1").textContent`)
	line := evalJS[string](t, ctx, `document.querySelector("pre.install code").textContent`)
	buttons := evalJS[int](t, ctx, `document.querySelectorAll(".line button").length`)
	if h1 != "This catalogue is private" || line != ts.URL+"/t/YOUR-TOKEN/" || buttons != 1 {
		t.Errorf("the private feed's page: h1 %q, address %q, %d copy buttons (the script ran: want 1)", h1, line, buttons)
	}
	// The page itself answers 401, which Chromium reports in the console
	// for each visit; anything else there is the page's fault, and every
	// file it loads must have answered 200 without a token.
	w.mu.Lock()
	for _, c := range w.console {
		if !strings.Contains(c, "status of 401") {
			t.Errorf("the private feed's page wrote to the console: %s", c)
		}
	}
	w.mu.Unlock()
	loaded := evalJS[[]string](t, ctx, `performance.getEntriesByType("resource").map(e => e.name + " " + e.responseStatus)`)
	if len(loaded) == 0 {
		t.Error("the private feed's page loaded no script")
	}
	for _, l := range loaded {
		if !strings.HasSuffix(l, " 200") {
			t.Errorf("the private feed's page loaded %s", l)
		}
	}
	browse(t, ctx, chromedp.Navigate(strings.Replace(line, "YOUR-TOKEN", fixture.AllSecret, 1)), chromedp.WaitVisible(chromedp.CSS("ul.items")))
	if n := evalJS[int](t, ctx, `document.querySelectorAll("ul.items > li").length`); n == 0 {
		t.Error("the address the page gives, with a token, lists nothing")
	}
}
