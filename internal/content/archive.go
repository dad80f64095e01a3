package content

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sync"

	"github.com/klauspost/compress/flate"
)

// ArchiveFile is one file that goes into an archive.
type ArchiveFile struct {
	Path       string // slash-separated, relative, no "." or ".." segments
	Data       []byte
	Executable bool // any execute bit on disk
	// Deflated, when set, is Data as BuildZip deflates it (an entry's
	// bytes, located by ZipSpans in an archive built from the same Data); it is
	// copied in instead of compressing Data again. Deflate at a fixed
	// level is a pure function of its input, so the archive's bytes are
	// the same either way.
	Deflated []byte
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

// CompressionLevel is the klauspost/compress flate level of every
// archive entry. It is fixed: changing it (or the compressor's version)
// changes every archive's bytes and digest, so the golden test pins them.
// Level 1 of klauspost/compress compresses several times faster than the
// standard library's best level, at a modestly larger size; building
// archives is most of a cold scan's time (docs/benchmarks.md).
const CompressionLevel = 1

var compressors = sync.Pool{New: func() any {
	fw, err := flate.NewWriter(io.Discard, CompressionLevel)
	if err != nil {
		panic(err) // only for an invalid level
	}
	return fw
}}

// buffers are reused for building archives, so a scan allocates each
// archive once, at its final size.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer is the largest buffer kept in buffers.
const maxPooledBuffer = 4 << 20

// BuildZip returns a zip whose bytes are a pure function of the files'
// paths, modes and bytes: the file at path first (a client reads it
// before the rest; the caller says which it is), then the rest in byte
// order of path; file entries only; a fixed timestamp; no extra fields; Deflate at a
// fixed level. Every path must be valid for fs.ValidPath, so no entry
// can name a folder or a place outside the archive. The input slice is
// not modified.
func BuildZip(first string, files []ArchiveFile) ([]byte, error) {
	ordered := slices.Clone(files)
	slices.SortFunc(ordered, func(a, b ArchiveFile) int {
		switch {
		case a.Path == b.Path:
			return 0
		case a.Path == first:
			return -1
		case b.Path == first:
			return 1
		case a.Path < b.Path:
			return -1
		default:
			return 1
		}
	})
	// A large archive gets a buffer of its own, allocated once at a
	// bound of its size and handed out as the archive: grown by doubling
	// and then copied out, a 1 GiB file's archive took 4.6 GB at its
	// peak (docs/benchmarks.md). Smaller ones share pooled buffers.
	bound := zipBound(ordered)
	var buf *bytes.Buffer
	if bound > maxPooledBuffer {
		buf = bytes.NewBuffer(make([]byte, 0, bound))
	} else {
		buf = buffers.Get().(*bytes.Buffer)
		defer func() {
			if buf.Cap() <= maxPooledBuffer {
				buf.Reset()
				buffers.Put(buf)
			}
		}()
	}
	w := zip.NewWriter(buf)
	// A deflate compressor is about a megabyte of state: reuse them.
	// Reset makes a reused one produce exactly what a new one would.
	var used []*flate.Writer
	defer func() {
		for _, fw := range used {
			compressors.Put(fw)
		}
	}()
	var reuse []byte // the entry being added was deflated before
	w.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		if reuse != nil {
			return &deflatedWriter{out: out, deflated: reuse}, nil
		}
		fw := compressors.Get().(*flate.Writer)
		fw.Reset(out)
		used = append(used, fw)
		return fw, nil
	})
	for i, f := range ordered {
		// A path a client would resolve outside its folder, or
		// that archive/zip would record as a folder, is never written.
		if !fs.ValidPath(f.Path) || f.Path == "." {
			return nil, fmt.Errorf("build zip: %q is not a relative file path", f.Path)
		}
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
		reuse = f.Deflated
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
	// keep the working buffer for the next one; a large one's own
	// buffer is the archive when deflate saved little (no copy of it at
	// its peak), and is copied out when it saved much (the bound's pages
	// past the end were never touched, but would count as live heap).
	out := buf.Bytes()
	if bound > maxPooledBuffer && cap(out)-len(out) <= len(out)/32 {
		return slices.Clip(out), nil
	}
	return bytes.Clone(out), nil
}

// zipBound is at least the size of the archive BuildZip makes of files,
// unless deflate's output of a file outgrows its input by more than a
// 64th (stored blocks add 5 bytes per block of up to 64 KiB), in which
// case the buffer grows. Per file: a local header, a data descriptor and
// a central directory record, each with the name; then the end record.
func zipBound(files []ArchiveFile) int {
	n := 22
	for _, f := range files {
		data := len(f.Data)
		if f.Deflated != nil {
			data = len(f.Deflated)
		}
		n += data + data/64 + 64 + 30 + 24 + 46 + 2*len(f.Path)
	}
	return n
}

// deflatedWriter stands in for the compressor of an entry whose deflated
// bytes are known: archive/zip still writes the file's bytes through it
// (and computes their CRC-32 and size), and Close writes the known
// deflated bytes in place of compressing them.
type deflatedWriter struct {
	out      io.Writer
	deflated []byte
}

func (d *deflatedWriter) Write(p []byte) (int, error) { return len(p), nil }

func (d *deflatedWriter) Close() error {
	_, err := d.out.Write(d.deflated)
	return err
}

// Span locates bytes within a blob: Len bytes from Off.
type Span struct{ Off, Len int64 }

// Of returns the bytes of data the span covers; ok is false when data is
// too short (not the blob the span was taken from).
func (sp Span) Of(data []byte) ([]byte, bool) {
	end := sp.Off + sp.Len
	if sp.Off < 0 || sp.Len < 0 || end > int64(len(data)) {
		return nil, false
	}
	return data[sp.Off:end:end], true
}

// ZipSpans locates the deflated bytes of each entry of an archive that
// BuildZip made, by path, for building later archives that hold the
// same files.
func ZipSpans(archive []byte) (map[string]Span, error) {
	r, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		return nil, fmt.Errorf("read zip: %w", err)
	}
	out := make(map[string]Span, len(r.File))
	for _, f := range r.File {
		if f.Method != zip.Deflate {
			return nil, fmt.Errorf("read zip: %q is not deflated", f.Name)
		}
		off, err := f.DataOffset()
		if err != nil {
			return nil, fmt.Errorf("read zip: %q: %w", f.Name, err)
		}
		sp := Span{Off: off, Len: int64(f.CompressedSize64)}
		if _, ok := sp.Of(archive); !ok {
			return nil, fmt.Errorf("read zip: %q lies outside the archive", f.Name)
		}
		out[f.Name] = sp
	}
	return out, nil
}
