package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/skillserver/skillserver/internal/httpapi"
)

// Set with -ldflags "-X main.version=... -X main.commit=... -X main.buildDate=...".
// `make build` does; `go install .../cmd/skillserver@v0.1.0` and
// `go build` do not, and then build() reads the module's build info.
var (
	version   = "dev"
	commit    = ""
	buildDate = ""
)

// build is what `skillserver version`, /api/v1/info, the agent card and
// the metrics report.
func build() httpapi.BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return resolveBuild(version, commit, buildDate, info)
}

// resolveBuild fills what the linker flags left unset from the binary's
// build info: the main module's version (the tag for `go install ...@tag`;
// in a checkout build the tag at HEAD or a pseudo-version, "(devel)" when
// the go command could not read the checkout, which is not a version), and the
// vcs.revision and vcs.time the go command stamps into a build from a
// checkout. A revision built with uncommitted changes ends in "-dirty".
func resolveBuild(ver, rev, date string, info *debug.BuildInfo) httpapi.BuildInfo {
	b := httpapi.BuildInfo{Version: ver, Commit: rev, BuildDate: date, GoVersion: runtime.Version()}
	if info == nil {
		return b
	}
	if b.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.Version = info.Main.Version
	}
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			if b.Commit == "" {
				b.Commit = s.Value
			}
		case "vcs.time":
			if b.BuildDate == "" {
				b.BuildDate = s.Value
			}
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && rev == "" && b.Commit != "" {
		b.Commit += "-dirty"
	}
	return b
}

// versionText is what `skillserver version` prints: the version alone on
// the first line (what scripts and the image test read), then the commit,
// its time and the Go release, each only when known.
func versionText(b httpapi.BuildInfo) string {
	s := b.Version + "\n"
	if b.Commit != "" {
		s += fmt.Sprintf("commit %s\n", b.Commit)
	}
	if b.BuildDate != "" {
		s += fmt.Sprintf("date   %s\n", b.BuildDate)
	}
	return s + fmt.Sprintf("go     %s\n", b.GoVersion)
}
