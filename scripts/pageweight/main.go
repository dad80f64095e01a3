// Command pageweight loads pages of a running skillserver in headless Chromium
// and prints, for each, what the browser's Navigation Timing saw: bytes
// on the wire and decoded, time to the last byte, to DOMContentLoaded
// and to the load event (docs/benchmarks.md, "HTML catalogue"). Each page
// is loaded -n times in one tab with the cache disabled; the median
// is printed.
//
//	go run -C scripts ./pageweight -n 5 http://127.0.0.1:8080/ http://127.0.0.1:8080/ui/skills/skill-00001
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

type timing struct {
	Transfer float64 `json:"transferSize"`
	Encoded  float64 `json:"encodedBodySize"`
	Decoded  float64 `json:"decodedBodySize"`
	Response float64 `json:"responseEnd"`
	DCL      float64 `json:"domContentLoadedEventEnd"`
	Load     float64 `json:"loadEventEnd"`
	Items    int     `json:"items"`
}

func main() {
	n := flag.Int("n", 5, "loads per page")
	flag.Parse()
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir, _ := os.MkdirTemp("", "page-weight")
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(chromium), chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.UserDataDir(dir))
	defer acancel()
	tctx, tcancel := chromedp.NewContext(actx)
	defer tcancel()
	if _, err := chromedp.Call(tctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, u := range flag.Args() {
		var runs []timing
		for range *n {
			err := chromedp.Do(tctx, chromedp.Navigate("about:blank"), chromedp.Navigate(u))
			var tm timing
			if err == nil {
				tm, err = chromedp.Run(tctx, chromedp.Evaluate[timing](`new Promise(r => setTimeout(() => {
					const e = performance.getEntriesByType("navigation")[0].toJSON();
					e.items = document.querySelectorAll("ul.items > li").length; r(e) }, 0))`, chromedp.EvalAwaitPromise))
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, u, err)
				os.Exit(1)
			}
			runs = append(runs, tm)
		}
		med := func(f func(timing) float64) float64 {
			v := make([]float64, len(runs))
			for i, r := range runs {
				v[i] = f(r)
			}
			slices.Sort(v)
			return v[len(v)/2]
		}
		fmt.Printf("%s\titems %d\twire %.0f B\tbody %.0f B (gzip %.0f B)\tlast byte %.1f ms\tDOMContentLoaded %.1f ms\tload %.1f ms\n", u, runs[0].Items,
			med(func(t timing) float64 { return t.Transfer }), med(func(t timing) float64 { return t.Decoded }), med(func(t timing) float64 { return t.Encoded }),
			med(func(t timing) float64 { return t.Response }), med(func(t timing) float64 { return t.DCL }), med(func(t timing) float64 { return t.Load }))
	}
}
