package content

import (
	"archive/zip"
	"bytes"
	"fmt"
	"github.com/klauspost/compress/flate"
	"io"
	"io/fs"
	"slices"
	"sync"
)

// ArchiveEntryName is the entry that always comes first in an archive.
const ArchiveEntryName = "SKILL.md"

// ArchiveFile is one file that goes into an archive.
type ArchiveFile struct {
	Path       string // slash-separated, relative, no "." or ".." segments
	Data       []byte
	Executable bool // any execute bit on disk
}

// Mode is the Unix mode the archive records for f: 0755 when the file has
// any execute bit, else 0644. Nothing else is ever recorded.
func (f ArchiveFile) Mode() fs.FileMode {
	if f.Executable {
		return 0o755
	}
	return 0o644
}

// MS-DOS date and time of 1980-01-01 00:00:00, the earliest a zip can hold.
const (
	dosDate1980 = 1<<5 | 1 // year 0 (1980), month 1, day 1
	dosTime0    = 0
)

// compressionLevel is fixed: changing it (or the compressor's version)
// changes every archive's bytes and digest, so the golden test pins them.
// Level 1 of klauspost/compress compresses several times faster than the
// standard library's best level, at a modestly larger size; building
// archives is most of a cold scan's time (docs/benchmarks.md).
const compressionLevel = 1

var compressors = sync.Pool{New: func() any {
	fw, err := flate.NewWriter(io.Discard, compressionLevel)
	if err != nil {
		panic(err) // only for an invalid level
	}
	return fw
}}

// buffers are reused for building archives, so a scan allocates each
// archive once, at its final size.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// BuildZip returns a zip whose bytes are a pure function of the files'
// paths, modes and bytes: SKILL.md first, then the rest in byte order of
// path; file entries only; a fixed timestamp; no extra fields; Deflate at a
// fixed level. The input slice is not modified.
func BuildZip(files []ArchiveFile) ([]byte, error) {
	ordered := slices.Clone(files)
	slices.SortFunc(ordered, func(a, b ArchiveFile) int {
		switch {
		case a.Path == b.Path:
			return 0
		case a.Path == ArchiveEntryName:
			return -1
		case b.Path == ArchiveEntryName:
			return 1
		case a.Path < b.Path:
			return -1
		default:
			return 1
		}
	})
	buf := buffers.Get().(*bytes.Buffer)
	defer func() {
		buf.Reset()
		buffers.Put(buf)
	}()
	w := zip.NewWriter(buf)
	// A deflate compressor is about a megabyte of state: reuse them.
	// Reset makes a reused one produce exactly what a new one would.
	var used []*flate.Writer
	defer func() {
		for _, fw := range used {
			compressors.Put(fw)
		}
	}()
	w.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		fw := compressors.Get().(*flate.Writer)
		fw.Reset(out)
		used = append(used, fw)
		return fw, nil
	})
	for i, f := range ordered {
		if i > 0 && f.Path == ordered[i-1].Path {
			return nil, fmt.Errorf("build zip: duplicate path %q", f.Path)
		}
		hdr := &zip.FileHeader{
			Name:   f.Path,
			Method: zip.Deflate,
			// Setting the legacy MS-DOS fields and leaving Modified zero keeps
			// archive/zip from adding an extended-timestamp extra field.
			//lint:ignore SA1019 deprecated, and the only way to write no extra field
			ModifiedDate: dosDate1980,
			//lint:ignore SA1019 as above
			ModifiedTime: dosTime0,
		}
		hdr.SetMode(f.Mode())
		fw, err := w.CreateHeader(hdr)
		if err != nil {
			return nil, fmt.Errorf("build zip: add %q: %w", f.Path, err)
		}
		if _, err := fw.Write(f.Data); err != nil {
			return nil, fmt.Errorf("build zip: write %q: %w", f.Path, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("build zip: %w", err)
	}
	// Snapshots keep the archive: copy it out at exactly its length and
	// keep the working buffer for the next one.
	return bytes.Clone(buf.Bytes()), nil
}
