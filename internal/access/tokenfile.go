package access

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// File is the token file as last read successfully. A reading that fails
// keeps the tokens of the previous one: a file being written, broken or
// deleted revokes nothing (a server that starts without it fails).
type File struct {
	path string
	cur  atomic.Pointer[Set]

	mu    sync.Mutex // serializes readings; guards what follows
	since time.Time  // when cur was read
	last  string     // what the previous reading found: its bytes' digest, or its error
}

// Open reads the token file at path; an error names the file and line.
func Open(path string) (*File, error) {
	f := &File{path: path}
	r := f.Reload()
	if r.Err != nil {
		return nil, r.Err
	}
	return f, nil
}

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Tokens returns the tokens of the last good reading.
func (f *File) Tokens() *Set { return f.cur.Load() }

// A Reading is what one Reload found.
type Reading struct {
	// Tokens are the tokens in force after the reading, read from the
	// file at Since.
	Tokens *Set
	Since  time.Time
	// Changed reports that the reading replaced the tokens in force.
	Changed bool
	// Err is why the file was not taken (the tokens in force stay);
	// Missing reports that the file does not exist.
	Err     error
	Missing bool
	// Same reports that the file read as at the previous reading: the
	// same bytes, or the same error. A caller that logs each change of
	// the file has logged this one.
	Same bool
}

// Reload reads the file again. On error the previous tokens stay in
// force.
func (f *File) Reload() Reading {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, err := os.ReadFile(f.path) // an error names the path
	var s *Set
	state := ""
	if err == nil {
		sum := sha256.Sum256(data)
		state = string(sum[:])
		s, err = Parse(bytes.NewReader(data), f.path)
	} else {
		state = "error: " + err.Error()
	}
	r := Reading{Tokens: f.cur.Load(), Since: f.since, Err: err, Missing: errors.Is(err, fs.ErrNotExist), Same: state == f.last}
	f.last = state
	if err != nil || r.Tokens != nil && s.Equal(r.Tokens) {
		return r
	}
	f.since = time.Now()
	f.cur.Store(s)
	r.Tokens, r.Since, r.Changed = s, f.since, true
	return r
}
