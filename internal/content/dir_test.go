package content

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// faults records what a Dir reports.
type faults struct {
	mu  sync.Mutex
	got []Fault
}

func (f *faults) report(x Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, x)
}

func (f *faults) kinds() []FaultKind {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []FaultKind
	for _, x := range f.got {
		out = append(out, x.Kind)
	}
	return out
}

func openDir(t *testing.T, path string) (*Dir, *faults) {
	t.Helper()
	var f faults
	d, err := OpenDir(path, f.report)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, &f
}

func TestDirWritesBlobsOnceByName(t *testing.T) {
	path := t.TempDir()
	d, _ := openDir(t, path)
	data := []byte("hello, blob\n")
	dg := Sum(data)
	if err := d.Write(dg, data); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(path, "blobs", "sha256", dg.Hex()[:2], dg.Hex())
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatalf("blob not at its content address: %v", err)
	}
	if fi.Mode().Perm() != 0o444 {
		t.Errorf("blob mode %v, want read-only 0444", fi.Mode().Perm())
	}
	if got, err := d.Read(dg); err != nil || !bytes.Equal(got, data) {
		t.Errorf("Read: %q %v", got, err)
	}
	// A second write of the same digest writes nothing: the file keeps
	// the old modification time set here.
	old := time.Unix(1_000_000_000, 0)
	if err := os.Chtimes(file, old, old); err != nil {
		t.Fatal(err)
	}
	if err := d.Write(dg, data); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(file); !fi.ModTime().Equal(old) {
		t.Error("a blob already held was written again")
	}
	if left, _ := os.ReadDir(filepath.Join(path, "tmp")); len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
	// Another process sees it by its name.
	d.Close()
	d2, _ := openDir(t, path)
	if !d2.Has(dg) || d2.Len() != 1 {
		t.Errorf("reopened: Has %v, Len %d; want the one blob", d2.Has(dg), d2.Len())
	}
	// Sweep keeps what is wanted and removes the rest.
	other := []byte("other")
	if err := d2.Write(Sum(other), other); err != nil {
		t.Fatal(err)
	}
	n, err := d2.Sweep(func(x Digest) bool { return x == dg })
	if err != nil || n != 1 || d2.Has(Sum(other)) || !d2.Has(dg) {
		t.Errorf("Sweep removed %d (%v); want the unwanted blob only", n, err)
	}
	if _, err := os.Stat(filepath.Join(path, "blobs", "sha256", Sum(other).Hex()[:2], Sum(other).Hex())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("swept blob still on disk: %v", err)
	}
}

// TestDirRefusesATamperedBlob: a blob whose bytes no longer match its
// name, edited while the server ran or while it was down, is not served:
// it is removed and reported, and Has no longer claims it.
func TestDirRefusesATamperedBlob(t *testing.T) {
	for _, restart := range []bool{false, true} {
		path := t.TempDir()
		d, f := openDir(t, path)
		data := []byte("the published bytes")
		dg := Sum(data)
		if err := d.Write(dg, data); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Read(dg); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(path, "blobs", "sha256", dg.Hex()[:2], dg.Hex())
		if err := os.Chmod(file, 0o644); err != nil {
			t.Fatal(err)
		}
		// Same size, other bytes, and a modification time moved on.
		if err := os.WriteFile(file, []byte("THE published bytes"), 0o644); err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(time.Minute)
		if err := os.Chtimes(file, later, later); err != nil {
			t.Fatal(err)
		}
		if restart {
			d.Close()
			d, f = openDir(t, path)
		}
		if _, _, err := d.Open(dg); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("restart %v: Open of a tampered blob: %v, want ErrCorrupt", restart, err)
		}
		if k := f.kinds(); len(k) != 1 || k[0] != FaultCorrupt {
			t.Errorf("restart %v: faults %v, want one corrupt", restart, k)
		}
		if d.Has(dg) {
			t.Errorf("restart %v: the tampered blob is still listed", restart)
		}
		if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("restart %v: the tampered blob is still on disk: %v", restart, err)
		}
		// The next write puts the right bytes back.
		if err := d.Write(dg, data); err != nil {
			t.Fatal(err)
		}
		if got, err := d.Read(dg); err != nil || !bytes.Equal(got, data) {
			t.Errorf("restart %v: rewritten blob reads %q %v", restart, got, err)
		}
	}
}

// TestDirIsOneProcess: a second opener of the same folder is refused
// until the first closes it (flock: another file description, as another
// process would hold).
func TestDirIsOneProcess(t *testing.T) {
	path := t.TempDir()
	d, _ := openDir(t, path)
	if _, err := OpenDir(path, nil); !errors.Is(err, ErrDirLocked) {
		t.Fatalf("second OpenDir: %v, want ErrDirLocked", err)
	}
	d.Close()
	d2, err := OpenDir(path, nil)
	if err != nil {
		t.Fatalf("OpenDir after the first closed: %v", err)
	}
	d2.Close()
}

// TestDirVanishedUnderTheServer: the folder removed while the server
// runs: the blob is reported unreadable, not served, and written again.
func TestDirVanishedUnderTheServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	d, f := openDir(t, path)
	data := []byte("bytes")
	dg := Sum(data)
	if err := d.Write(dg, data); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(path); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Read(dg); err == nil {
		t.Fatal("a vanished blob was read")
	}
	if k := f.kinds(); len(k) != 1 || k[0] != FaultRead {
		t.Errorf("faults %v, want one read", k)
	}
	if err := d.Write(dg, data); err != nil {
		t.Fatalf("writing into the vanished folder: %v", err)
	}
	if got, err := d.Read(dg); err != nil || !bytes.Equal(got, data) {
		t.Errorf("rewritten blob reads %q %v", got, err)
	}
}

// mountTmpfs mounts a tmpfs at a new folder with opts, or skips when
// this process may not mount (not root).
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}

// TestDirOnAReadOnlyFilesystem: a state directory that cannot be written
// is an error at open, never a silent fallback.
func TestDirOnAReadOnlyFilesystem(t *testing.T) {
	ro := mountTmpfs(t, "ro,size=1m")
	if _, err := OpenDir(filepath.Join(ro, "state"), nil); err == nil {
		t.Fatal("OpenDir on a read-only filesystem succeeded")
	}
	if _, err := OpenDir(ro, nil); err == nil {
		t.Fatal("OpenDir of a read-only mount point succeeded")
	}
}

// TestStoreOnAFullDisk: blobs the full disk refuses are held in memory
// and served all the same; the first failure of the run is reported once,
// and every one is counted.
func TestStoreOnAFullDisk(t *testing.T) {
	full := mountTmpfs(t, "size=64k")
	d, f := openDir(t, filepath.Join(full, "state"))
	b := NewBuilder(d)
	small := []byte("fits")
	big1 := bytes.Repeat([]byte("a"), 128<<10)
	big2 := bytes.Repeat([]byte("b"), 128<<10)
	for _, data := range [][]byte{small, big1, big2} {
		b.PutDigested(Sum(data), data)
	}
	s := b.Store()
	for _, data := range [][]byte{small, big1, big2} {
		if got, ok := s.Get(Sum(data)); !ok || !bytes.Equal(got, data) {
			t.Errorf("blob of %d bytes: served %d bytes (%v)", len(data), len(got), ok)
		}
	}
	if _, in := mustBlob(t, s, Sum(small)).InMemory(); in {
		t.Error("the blob that fit is held in memory, not in the folder")
	}
	if _, in := mustBlob(t, s, Sum(big1)).InMemory(); !in {
		t.Error("a blob the disk refused is not held in memory")
	}
	if k := f.kinds(); len(k) != 1 || k[0] != FaultWrite {
		t.Errorf("faults reported %v, want the first write failure only", k)
	}
	if n := d.Faults()[FaultWrite]; n != 2 {
		t.Errorf("write faults counted %d, want 2", n)
	}
	if s.MemoryBytes() != int64(len(big1)+len(big2)) {
		t.Errorf("MemoryBytes %d, want %d", s.MemoryBytes(), len(big1)+len(big2))
	}
}

func mustBlob(t *testing.T, s *Store, d Digest) Blob {
	t.Helper()
	b, ok := s.Blob(d)
	if !ok {
		t.Fatalf("no blob %s", d)
	}
	return b
}

// TestSmallBlobsAreKeptHot: a small blob is served from memory once read,
// within the bound, the least recently used going first; a large one
// never is; a swept one is forgotten.
func TestSmallBlobsAreKeptHot(t *testing.T) {
	d, _ := openDir(t, t.TempDir())
	d.SetHotBytes(64)
	put := func(s string) Digest {
		dg := Sum([]byte(s))
		if err := d.Write(dg, []byte(s)); err != nil {
			t.Fatal(err)
		}
		return dg
	}
	a, b := put("aaaa"), put("bbbb")
	big := put("this one is longer than a sixteenth")
	if _, ok, _ := d.Small(big, 36); ok {
		t.Error("a blob over a sixteenth of the bound was kept")
	}
	if got, ok, err := d.Small(a, 4); !ok || err != nil || string(got) != "aaaa" {
		t.Fatalf("Small(a): %q %v %v", got, ok, err)
	}
	// Served from memory now, even with the file gone.
	os.Remove(filepath.Join(d.Path(), "blobs", "sha256", a.Hex()[:2], a.Hex()))
	if got, ok, err := d.Small(a, 4); !ok || err != nil || string(got) != "aaaa" {
		t.Errorf("a kept blob was read again: %q %v %v", got, ok, err)
	}
	d.Sweep(func(x Digest) bool { return x != b })
	if _, ok, err := d.Small(b, 4); !ok || err == nil {
		t.Errorf("a swept blob was served: %v %v", ok, err)
	}
	d.SetHotBytes(0)
	if _, ok, _ := d.Small(a, 4); ok {
		t.Error("with no hot cache a blob was kept")
	}
}

// TestStoreGetUsesTheHotCache: the pages, MCP and ClawHub read small
// files whole through Store.Get; once read, a small blob comes from the
// hot cache (even with its file gone), a large one from its file.
func TestStoreGetUsesTheHotCache(t *testing.T) {
	d, _ := openDir(t, t.TempDir())
	d.SetHotBytes(1 << 10)
	small, large := []byte("small"), bytes.Repeat([]byte("l"), 1<<10)
	b := NewBuilder(d)
	for _, data := range [][]byte{small, large} {
		b.PutDigested(Sum(data), data)
	}
	s := b.Store()
	for _, data := range [][]byte{small, large} {
		if got, ok := s.Get(Sum(data)); !ok || !bytes.Equal(got, data) {
			t.Fatalf("Get of %d bytes: %d bytes (%v)", len(data), len(got), ok)
		}
		hex := Sum(data).Hex()
		if err := os.Remove(filepath.Join(d.Path(), "blobs", "sha256", hex[:2], hex)); err != nil {
			t.Fatal(err)
		}
	}
	if got, ok := s.Get(Sum(small)); !ok || !bytes.Equal(got, small) {
		t.Errorf("the small blob was read from its file again: %q (%v)", got, ok)
	}
	if _, ok := s.Get(Sum(large)); ok {
		t.Error("the large blob was kept in memory")
	}
}

// TestScanReadsLeaveTheHotCacheAlone: Store.Read and Builder.Get (the
// scan's reads) take a blob from the hot cache when it is there, and
// otherwise read its file without keeping it.
func TestScanReadsLeaveTheHotCacheAlone(t *testing.T) {
	d, _ := openDir(t, t.TempDir())
	d.SetHotBytes(1 << 10)
	cold, warm := []byte("cold"), []byte("warm")
	b := NewBuilder(d)
	for _, data := range [][]byte{cold, warm} {
		b.PutDigested(Sum(data), data)
	}
	if got, ok := b.Get(Sum(cold)); !ok || !bytes.Equal(got, cold) {
		t.Fatalf("Builder.Get: %q (%v)", got, ok)
	}
	s := b.Store()
	if got, ok := s.Read(Sum(cold)); !ok || !bytes.Equal(got, cold) {
		t.Fatalf("Store.Read: %q (%v)", got, ok)
	}
	if got, ok := s.Get(Sum(warm)); !ok || !bytes.Equal(got, warm) {
		t.Fatalf("Store.Get: %q (%v)", got, ok)
	}
	for _, data := range [][]byte{cold, warm} {
		hex := Sum(data).Hex()
		if err := os.Remove(filepath.Join(d.Path(), "blobs", "sha256", hex[:2], hex)); err != nil {
			t.Fatal(err)
		}
	}
	if got, ok := s.Read(Sum(cold)); ok {
		t.Errorf("a blob only the scan read was kept hot: %q", got)
	}
	if got, ok := s.Read(Sum(warm)); !ok || !bytes.Equal(got, warm) {
		t.Errorf("Store.Read did not take a hot blob from memory: %q (%v)", got, ok)
	}
}
