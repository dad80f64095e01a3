// Command release writes the release archives and their checksums for
// `make dist` (README.md, "Install"), so that two builds of one commit
// give the same bytes: every entry has the commit's time, owner 0:0 with
// no names, mode 0755 (directories and executables) or 0644, and the
// entries are sorted.
//
//	release archive -o dist/NAME.tar.gz -prefix NAME -mtime EPOCH FILE...
//	release sums DIR
//	release image -in BUILT.tar -out FIXED.tar -tag NAME:TAG
//
// archive writes a .tar.gz or a .zip (by the name of -o) holding each
// FILE, by its base name, under the folder -prefix. sums writes
// DIR/SHA256SUMS for every other file of DIR, in the format of sha256sum
// (`sha256sum -c SHA256SUMS` checks them). image rewrites an image podman
// built (saved as a docker-archive) without the fields that differ
// between two builds, for `make docker` to load back.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "archive":
		fs := flag.NewFlagSet("archive", flag.ExitOnError)
		out := fs.String("o", "", "the archive to write: NAME.tar.gz or NAME.zip")
		prefix := fs.String("prefix", "", "the folder in the archive that holds the files")
		mtime := fs.Int64("mtime", 0, "the time of every entry, in seconds since 1970 (SOURCE_DATE_EPOCH)")
		_ = fs.Parse(os.Args[2:])
		if *out == "" || *prefix == "" || fs.NArg() == 0 {
			usage()
		}
		err = archive(*out, *prefix, time.Unix(*mtime, 0).UTC(), fs.Args())
	case "image":
		fs := flag.NewFlagSet("image", flag.ExitOnError)
		in := fs.String("in", "", "the docker-archive a build wrote (podman save --format docker-archive)")
		out := fs.String("out", "", "the docker-archive to write, for podman load")
		tag := fs.String("tag", "", "the image's name and tag in out")
		_ = fs.Parse(os.Args[2:])
		if *in == "" || *out == "" || *tag == "" || fs.NArg() != 0 {
			usage()
		}
		err = image(*in, *out, *tag)
	case "sums":
		if len(os.Args) != 3 {
			usage()
		}
		err = sums(os.Args[2])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: release archive -o OUT.tar.gz|OUT.zip -prefix DIR -mtime EPOCH FILE...\n       release sums DIR\n       release image -in BUILT.tar -out FIXED.tar -tag NAME:TAG")
	os.Exit(2)
}

// entry is one file of an archive.
type entry struct {
	name string // under the prefix
	mode int64  // 0755 or 0644
	body []byte
}

// archive writes the files, sorted by base name, under prefix/ into out.
func archive(out, prefix string, mtime time.Time, files []string) error {
	var entries []entry
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		fi, err := os.Stat(f)
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if fi.Mode()&0o111 != 0 {
			mode = 0o755
		}
		entries = append(entries, entry{name: filepath.Base(f), mode: mode, body: body})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(entries); i++ {
		if entries[i].name == entries[i-1].name {
			return fmt.Errorf("two files named %s", entries[i].name)
		}
	}
	var buf bytes.Buffer
	var err error
	switch {
	case strings.HasSuffix(out, ".tar.gz"):
		err = writeTarGz(&buf, prefix, mtime, entries)
	case strings.HasSuffix(out, ".zip"):
		err = writeZip(&buf, prefix, mtime, entries)
	default:
		err = fmt.Errorf("%s: want a .tar.gz or .zip name", out)
	}
	if err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// writeTarGz writes a ustar archive (no PAX records: no access or change
// times) in a gzip stream with no name and no time in its header.
func writeTarGz(w io.Writer, prefix string, mtime time.Time, entries []entry) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	hdr := func(name string, mode int64, typ byte, size int64) *tar.Header {
		return &tar.Header{Typeflag: typ, Name: name, Mode: mode, Size: size, ModTime: mtime, Format: tar.FormatUSTAR}
	}
	if err := tw.WriteHeader(hdr(prefix+"/", 0o755, tar.TypeDir, 0)); err != nil {
		return err
	}
	for _, e := range entries {
		if err := tw.WriteHeader(hdr(path.Join(prefix, e.name), e.mode, tar.TypeReg, int64(len(e.body)))); err != nil {
			return err
		}
		if _, err := tw.Write(e.body); err != nil {
			return err
		}
	}
	return errors.Join(tw.Close(), zw.Close())
}

// writeZip writes a zip whose entries carry the time both as MS-DOS
// fields and as the extended timestamp.
func writeZip(w io.Writer, prefix string, mtime time.Time, entries []entry) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestCompression)
	})
	dir := &zip.FileHeader{Name: prefix + "/", Method: zip.Store, Modified: mtime}
	dir.SetMode(os.ModeDir | 0o755)
	if _, err := zw.CreateHeader(dir); err != nil {
		return err
	}
	for _, e := range entries {
		h := &zip.FileHeader{Name: path.Join(prefix, e.name), Method: zip.Deflate, Modified: mtime}
		h.SetMode(os.FileMode(e.mode))
		f, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := f.Write(e.body); err != nil {
			return err
		}
	}
	return zw.Close()
}

// sums writes dir/SHA256SUMS: "HEX  NAME" for each other file of dir, by
// name.
func sums(dir string) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, de := range des { // ReadDir sorts by name
		if de.Name() == "SHA256SUMS" || !de.Type().IsRegular() {
			continue
		}
		body, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), de.Name())
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()), 0o644)
}
