package catalog

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func heapMB() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc >> 20
}

func TestScratchRetentionMemory(t *testing.T) {
	for _, mode := range []string{"reload", "update"} {
		t.Run(mode, func(t *testing.T) {
			root := t.TempDir()
			writeFile(t, filepath.Join(root, "a", "SKILL.md"), skillMD("a"), 0o644)
			writeFile(t, filepath.Join(root, "b", "SKILL.md"), skillMD("b"), 0o644)
			big := make([]byte, 9<<20)
			rand.Read(big)
			os.WriteFile(filepath.Join(root, "a", "big.bin"), big, 0o644)
			t.Logf("start heap %d MB", heapMB())
			c := newTestCatalog(t, Source{SkillsDir: root}, Options{RetentionMaxBytes: 64 << 20})
			t.Logf("after first heap %d MB", heapMB())
			for i := range 8 {
				rand.Read(big)
				os.WriteFile(filepath.Join(root, "a", "big.bin"), big, 0o644)
				var err error
				if mode == "reload" {
					_, err = c.Reload(t.Context())
				} else {
					_, err = c.Update(t.Context(), Changes{Skills: map[string]bool{"a": true}})
				}
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("rewrite %d: heap %d MB stats %+v storeBytes %d", i, heapMB(), c.Retention(), c.Current().Store.Bytes()>>20)
			}
			runtime.KeepAlive(c)
		})
	}
}
