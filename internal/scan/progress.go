package scan

import "sync/atomic"

// Progress counts a scan's top-level entries while it runs, for a log of
// how far a long scan has got: Total grows as each root is listed, Done
// as each of its entries is scanned. Any goroutine may read it.
type Progress struct{ done, total atomic.Int64 }

// Counts returns the entries scanned so far and the entries of the roots
// listed so far.
func (p *Progress) Counts() (done, total int64) {
	return p.done.Load(), p.total.Load()
}

// Add adds done entries scanned and total entries listed.
func (p *Progress) Add(done, total int64) {
	p.done.Add(done)
	p.total.Add(total)
}
