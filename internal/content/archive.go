package content

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"io/fs"
	"slices"
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
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	w.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestCompression)
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
			ModifiedDate: dosDate1980,
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
	return buf.Bytes(), nil
}
