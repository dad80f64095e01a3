package access

import (
	"os"
	"sync"
	"sync/atomic"
)

// File is the token file as last read successfully. A reading that fails
// keeps the tokens of the previous one.
type File struct {
	path string
	mu   sync.Mutex // serializes readings
	cur  atomic.Pointer[Set]
}

// Open reads the token file at path; an error names the file and line.
func Open(path string) (*File, error) {
	f := &File{path: path}
	s, err := f.read()
	if err != nil {
		return nil, err
	}
	f.cur.Store(s)
	return f, nil
}

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Tokens returns the tokens of the last good reading.
func (f *File) Tokens() *Set { return f.cur.Load() }

// Reload reads the file again. changed is false when it holds the same
// tokens as before; on error the previous tokens stay in force.
func (f *File) Reload() (s *Set, changed bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err = f.read()
	if err != nil {
		return f.cur.Load(), false, err
	}
	if s.Equal(f.cur.Load()) {
		return s, false, nil
	}
	f.cur.Store(s)
	return s, true, nil
}

func (f *File) read() (*Set, error) {
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, err // names the path
	}
	defer fh.Close()
	return Parse(fh, f.path)
}
