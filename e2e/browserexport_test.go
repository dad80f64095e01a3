//go:build e2e

package e2e

import (
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/skillserver/skillserver/internal/fixture"
)

// visibleJS lists the names of the catalogue's items a reader sees.
const visibleJS = `[...document.querySelectorAll("ul.items > li")].filter(li => !li.hidden && li.offsetParent !== null).map(li => li.dataset.name)`

// TestBrowserExportedCatalogue: an export served by real nginx with the
// configuration docs/operations.md gives (read from the docs) is a
// catalogue: / lists every item, the search field filters the list in
// the browser (by words, kind, and a tag link's ?tag=), without
// JavaScript it is the plain list, a skill's link opens its page with its
// script and the pages' headers, axe finds nothing on the pages in light
// and dark mode at both widths, and the install line the page gives
// installs that skill with the real skills CLI.
func TestBrowserExportedCatalogue(t *testing.T) {
	chromium := requireBrowser(t)
	axe := axeSource(t)
	skills, agents := fixture.ExampleTree(t, repoRoot)
	dir := t.TempDir()
	s := &site{root: dir, extra: documentedNginx(t)}
	startStaticHosts(t, []*site{s})
	runExport(t, "--skills", skills, "--agents", agents, "--base-url", s.url, "--out", dir)

	resp, _ := fixture.Fetch(t, http.MethodGet, s.url+"/ui/skills/k8s-deploy", "", "")
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/html; charset=utf-8" ||
		resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("a page behind nginx: %d %q, headers %v", resp.StatusCode, ct, resp.Header)
	}
	if resp, _ := fixture.Fetch(t, http.MethodGet, s.url+"/_headers", "", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("nginx serves the _headers file: %d", resp.StatusCode)
	}

	ctx := browser(t, chromium)
	w := watchPage(t, ctx)
	viewport(t, ctx, 1280, 900, "light")
	browse(t, ctx, chromedp.Navigate(s.url+"/"), chromedp.WaitVisible(chromedp.CSS("ul.items")))
	all := evalJS[[]string](t, ctx, visibleJS)
	if len(all) != 7 {
		t.Fatalf("the exported catalogue lists %q; want the example tree's 7 items", all)
	}
	browse(t, ctx, chromedp.SendKeys(chromedp.CSS("#q"), "kube"))
	if got := evalJS[[]string](t, ctx, visibleJS); !slices.Equal(got, []string{"k8s-deploy"}) {
		t.Errorf("typing kube shows %q; want k8s-deploy", got)
	}
	browse(t, ctx, chromedp.Evaluate[chromedp.Void](`const q = document.getElementById("q"); q.value = ""; q.dispatchEvent(new Event("input"))`),
		chromedp.SetValue(chromedp.CSS("#kind"), "subagent"),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("kind").dispatchEvent(new Event("change"))`))
	if got := evalJS[[]string](t, ctx, visibleJS); !slices.Equal(got, []string{"changelog-reviewer", "technical-support-diagnostician"}) {
		t.Errorf("choosing sub-agents shows %q", got)
	}
	browse(t, ctx, chromedp.Navigate(s.url+"/?tag=deploy"), chromedp.WaitVisible(chromedp.CSS("ul.items")))
	if got, count := evalJS[[]string](t, ctx, visibleJS), evalJS[string](t, ctx, `document.getElementById("count").textContent`); !slices.Equal(got, []string{"k8s-deploy"}) || !strings.HasPrefix(count, "1 item") {
		t.Errorf("?tag=deploy shows %q (%q)", got, count)
	}

	browse(t, ctx, chromedp.Navigate(s.url+"/"), chromedp.WaitVisible(chromedp.CSS("ul.items")),
		chromedp.Click(chromedp.CSS(`ul.items a[href="/ui/skills/k8s-deploy"]`), chromedp.NodeVisible), chromedp.WaitVisible(chromedp.CSS(".line button")))
	h1 := evalJS[string](t, ctx, `document.querySelector("h1").textContent`)
	tabs := evalJS[[]string](t, ctx, `[...document.querySelectorAll(".clients label")].map(l => l.textContent)`)
	line := evalJS[string](t, ctx, `document.querySelector("#p-skills pre.install code").textContent`)
	if h1 != "k8s-deploy" || !slices.Equal(tabs, []string{"skills CLI", "netclaw", "curl"}) || !strings.HasSuffix(line, " add "+s.url+"/skill/k8s-deploy") {
		t.Errorf("the exported skill page: h1 %q, clients %q, first line %q", h1, tabs, line)
	}
	if n := evalJS[int](t, ctx, `document.querySelectorAll("dd.fetches, .ago").length`); n != 1 {
		t.Errorf("the exported page shows %d of the fetch count and the relative date; want the date alone", n)
	}
	w.check(t, "the exported catalogue")

	for _, m := range modes {
		viewport(t, ctx, m.width, m.height, m.scheme)
		for _, p := range []string{"/", "/ui/skills/k8s-deploy", "/ui/skills/k8s-deploy/1.2.0/files/scripts/deploy.sh", "/ui/skills/k8s-deploy/1.2.0/compare/1.0.0",
			"/ui/subagents/technical-support-diagnostician"} {
			browse(t, ctx, chromedp.Navigate(s.url+p), chromedp.WaitReady(chromedp.CSS("footer")))
			checkAxe(t, ctx, axe, "exported "+p+" ("+m.name+")")
		}
	}

	cdpCall(t, ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
	browse(t, ctx, chromedp.Navigate(s.url+"/?q=kube"), chromedp.WaitVisible(chromedp.CSS("ul.items")))
	if got := evalJS[[]string](t, ctx, visibleJS); len(got) != len(all) {
		t.Errorf("without JavaScript the exported catalogue shows %q; want the plain list of all %d", got, len(all))
	}

	t.Run("install line", func(t *testing.T) {
		npx := requireInterop(t)
		env, args := pastedCLI(t, line, false)
		cwd := t.TempDir()
		out, _, err := skillsCLIEnv(t, npx, cwd, env, append(args, "-y", "-a", "universal", "--skill", "*")...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		root := filepath.Join(cwd, ".agents", "skills")
		if got, err := installedNames(root); err != nil || !slices.Equal(got, []string{"k8s-deploy"}) {
			t.Fatalf("%s installed %v (%v), want k8s-deploy\n%s", line, got, err, out)
		}
		checkInstalled(t, skills, filepath.Join(root, "k8s-deploy"), "k8s-deploy", "1.2.0")
	})
}
