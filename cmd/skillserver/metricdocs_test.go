package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skillserver/skillserver/internal/metrics"
)

// metricNameRE finds skillserver metric names in text; a histogram's
// series suffixes are part of the match.
var metricNameRE = regexp.MustCompile(`\bskillserver_[a-z_]*[a-z]\b`)

var descNameRE = regexp.MustCompile(`fqName: "([^"]+)"`)

// exportedMetricNames lists every metric name internal/metrics registers,
// read from the descriptors, so a labelled metric with no series yet is
// listed too.
func exportedMetricNames(t *testing.T) []string {
	t.Helper()
	m := metrics.New(metrics.Build{Version: "test"})
	descs := make(chan *prometheus.Desc)
	go func() {
		m.Registry().Describe(descs)
		close(descs)
	}()
	var names []string
	for d := range descs {
		match := descNameRE.FindStringSubmatch(d.String())
		if match == nil {
			t.Fatalf("cannot read the name of %s", d)
		}
		names = append(names, match[1])
	}
	return names
}

// isExported reports whether name is a metric in names or one of a
// histogram's series (_bucket, _sum, _count).
func isExported(names []string, name string) bool {
	if slices.Contains(names, name) {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && slices.Contains(names, base) {
			return true
		}
	}
	return false
}

// TestOperationsDocMetricNames checks that every skillserver_ metric the
// operations guide and the deploy/ examples (the Helm chart's files
// included) mention exists.
func TestOperationsDocMetricNames(t *testing.T) {
	exported := exportedMetricNames(t)
	files := []string{"../../docs/operations.md"}
	err := filepath.WalkDir("../../deploy", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil || len(files) == 1 {
		t.Fatalf("deploy/: no files (%v)", err)
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range metricNameRE.FindAllString(string(text), -1) {
			if !isExported(exported, name) {
				t.Errorf("%s mentions %s, which internal/metrics does not export", f, name)
			}
		}
	}
}
