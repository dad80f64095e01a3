package main

import (
	"fmt"
	"net/http"
	"net/http/pprof"
	"runtime"
	"strconv"
	"sync"
)

// mountProfiles serves net/http/pprof's handlers on mux (metrics_pprof):
// on the metrics listener only. Its import registers them on
// http.DefaultServeMux too, which nothing here serves.
func mountProfiles(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.Handle("GET /debug/pprof/profile", boundedProfile(pprof.Profile))
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol) // as go tool pprof asks
	mux.Handle("GET /debug/pprof/trace", boundedProfile(pprof.Trace))
}

// maxProfileSeconds bounds ?seconds= of the CPU profile and the trace: a
// connection held for a profile is being served, so it is never evicted,
// and a few clients asking for hours would hold every metrics
// connection.
const maxProfileSeconds = 60

// memProfileRate is the heap profile's sampling rate as the program
// started: Go's default, or what GODEBUG=memprofilerate=N set.
var memProfileRate = runtime.MemProfileRate

// profileAllocations starts the heap profile's sampling again where main
// turned it off, before the first scan, so /debug/pprof/heap and allocs
// cover it.
var profileAllocations = sync.OnceFunc(func() {
	if runtime.MemProfileRate == 0 {
		runtime.MemProfileRate = memProfileRate
	}
})

// boundedProfile refuses a profile or trace longer than maxProfileSeconds.
func boundedProfile(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.URL.Query().Get("seconds"); v != "" {
			if n, err := strconv.ParseFloat(v, 64); err != nil || n > maxProfileSeconds {
				http.Error(w, fmt.Sprintf("seconds=%s: at most %d", v, maxProfileSeconds), http.StatusBadRequest)
				return
			}
		}
		h(w, r)
	})
}
