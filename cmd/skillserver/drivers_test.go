package main

import (
	"os/exec"
	"strings"
	"testing"
)

// noDrivers are the build tags that leave every optional bucket driver
// out: the build `make build`, the release archives and the image ship as
// skillserver (the Makefile's NO_DRIVERS).
const noDrivers = "no_s3blob,no_gcsblob,no_azureblob"

// TestMakeBuildsBothBinaries: make build (and with it make docker and
// make dist, through the same build_pair) builds skillserver with the
// tags that leave every bucket driver out, and skillserver-export
// without them.
func TestMakeBuildsBothBinaries(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	out, err := exec.Command("make", "-s", "-n", "-C", "../..", "build").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n build: %v\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, "-tags '"+noDrivers+"' -ldflags") || !strings.Contains(s, "-o $3/skillserver$4 ./cmd/skillserver") {
		t.Errorf("make build does not build skillserver with -tags %s:\n%s", noDrivers, s)
	}
	if !strings.Contains(s, "go build -trimpath -ldflags '-s -w -buildid= -X main.version") || !strings.Contains(s, "-o $3/"+fullBuild+"$4 ./cmd/skillserver") {
		t.Errorf("make build does not build %s without tags:\n%s", fullBuild, s)
	}
}
