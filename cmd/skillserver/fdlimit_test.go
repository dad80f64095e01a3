package main

import (
	"runtime"
	"testing"

	"github.com/spf13/pflag"

	"github.com/skillserver/skillserver/internal/config"
)

// max_connections 0 leaves room under any open-file limit for the
// dozen descriptors the process holds before its first client, and for
// the metrics listener's cap: under `ulimit -n 24` the old floor of 16
// connections made accept fail with EMFILE and /healthz time out.
func TestAutoMaxConnections(t *testing.T) {
	var metricsCap int // metrics_max_connections' default
	for _, k := range config.Keys {
		if k.Name == "metrics_max_connections" {
			metricsCap = k.Default.(int)
		}
	}
	if metricsCap == 0 {
		t.Fatal("no metrics_max_connections key with a default")
	}
	const headroom = 168 // the defaults' on two cores (fdHeadroom)
	for _, tt := range []struct {
		nofile uint64
		want   int
	}{
		{1 << 20, autoMaxConns},
		{^uint64(0), autoMaxConns}, // RLIM_INFINITY
		{autoMaxConns + headroom, autoMaxConns},
		{1024, 1024 - headroom},
		{64, 16},
		{24, 6},
		{8, 2},
		{1, 1},
	} {
		got := autoMaxConnections(tt.nofile, headroom)
		if got != tt.want {
			t.Errorf("open-file limit %d: %d connections, want %d", tt.nofile, got, tt.want)
		}
		if metrics := min(metricsCap, got); tt.nofile >= 2*baseFDsOfProcess && uint64(got+metrics+baseFDsOfProcess) > tt.nofile {
			t.Errorf("open-file limit %d: %d connections and %d for metrics leave no room for the process", tt.nofile, got, metrics)
		}
	}
}

// What max_connections 0 leaves free grows with what the process can
// hold open besides clients: the metrics listener's connections when it
// listens, and a folder per level of max_folder_depth on each scan
// worker. With a fixed 64, a scan of a deeply nested tree on a server at
// its connection cap ran out of descriptors.
func TestFDHeadroomCoversTheScan(t *testing.T) {
	cfg, err := config.Load(pflag.NewFlagSet("test", pflag.ContinueOnError), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	procs := runtime.GOMAXPROCS(0)
	base := fdHeadroom(cfg)
	if scan := procs * (cfg.MaxFolderDepth + 1); base < scan+baseFDsOfProcess {
		t.Errorf("headroom %d: less than the scan's %d folders and the process's %d", base, scan, baseFDsOfProcess)
	}
	deeper := *cfg
	deeper.MaxFolderDepth += 10
	if got := fdHeadroom(&deeper); got != base+10*procs {
		t.Errorf("max_folder_depth +10: headroom %d, want %d", got, base+10*procs)
	}
	withMetrics := *cfg
	withMetrics.MetricsListen = "127.0.0.1:0"
	if got := fdHeadroom(&withMetrics); got != base+cfg.MetricsMaxConns {
		t.Errorf("with metrics_listen: headroom %d, want %d", got, base+cfg.MetricsMaxConns)
	}
}

// baseFDsOfProcess is about what the server holds open before its first
// client and scan: stdio, epoll and its event fd, the listeners, the log,
// the watch.
const baseFDsOfProcess = 12
