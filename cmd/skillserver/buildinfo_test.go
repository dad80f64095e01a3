package main

import (
	"runtime/debug"
	"testing"

	"github.com/skillserver/skillserver/internal/httpapi"
)

func TestResolveBuild(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-30T10:00:00Z"},
		{Key: "vcs.modified", Value: "false"},
	}
	dirty := append(vcs[:3:3], debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	for _, tc := range []struct {
		name           string
		ver, rev, date string
		info           *debug.BuildInfo
		want           httpapi.BuildInfo
	}{
		{"no build info", "dev", "", "", nil, httpapi.BuildInfo{Version: "dev"}},
		{"go install @tag", "dev", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}},
			httpapi.BuildInfo{Version: "v0.1.0"}},
		{"go build in a checkout", "dev", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			httpapi.BuildInfo{Version: "dev", Commit: vcs[1].Value, BuildDate: vcs[2].Value}},
		{"uncommitted changes", "dev", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: dirty},
			httpapi.BuildInfo{Version: "dev", Commit: vcs[1].Value + "-dirty", BuildDate: vcs[2].Value}},
		{"ldflags win", "v0.2.0-3-gabc", "abc", "2026-12-01T00:00:00Z",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}, Settings: dirty},
			httpapi.BuildInfo{Version: "v0.2.0-3-gabc", Commit: "abc", BuildDate: "2026-12-01T00:00:00Z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := resolveBuild(tc.ver, tc.rev, tc.date, tc.info)
			got.GoVersion = ""
			if got != tc.want {
				t.Errorf("resolveBuild = %+v, want %+v", got, tc.want)
			}
		})
	}
}
