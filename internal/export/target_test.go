package export_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skillserver/skillserver/internal/export/targettest"
)

// TestTargetContract: the folder and the file:// bucket keep the contract
// of every export.Target (internal/export/targettest); the end-to-end
// tests hold S3 to it against a real server.
func TestTargetContract(t *testing.T) {
	t.Run("folder", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		targettest.Run(t, dir, targettest.Kind{Dir: dir})
	})
	t.Run("file bucket", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "bucket")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		targettest.Run(t, "file://"+dir, targettest.Kind{Attributes: true, Dir: dir})
	})
}
