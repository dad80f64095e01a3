package transport

import (
	"net"
	"sync"
	"time"
)

// A deadline set on a connection is a change of one of the runtime's
// timers, under the poller's lock. net/http sets the read deadline four
// to six times a request (idle_timeout before the next request,
// read_header_timeout while it arrives, none while the handler runs, and
// the wake-up of its background read), and the stall deadline moves the
// write deadline on with every response: on a small answer these were as
// many timer changes as requests times eight.
//
// A tracked connection keeps the deadline it was asked for and gives it to the
// connection only when a Read or Write is about to use it, so deadlines
// replaced before any read or write cost nothing. A deadline set while a
// Read or Write is under way (net/http's wake-up of its background read,
// from another goroutine) is applied at once, so no read or write is
// ever bound by another deadline than it would have been.
//
// Write deadlines have one more saving: one that lands no more than a
// sixteenth of its distance before the deadline the connection already
// holds is left as it is, and a new one is set that sixteenth later. A
// response then never fails sooner than write_stall_timeout after it
// last made progress, and at most a sixteenth of it later, and a busy
// connection sets its write deadline about once per that sixteenth
// instead of three times a request.
type lazyDeadline struct {
	mu    sync.Mutex
	want  time.Time // the deadline asked for last
	armed time.Time // the deadline the connection holds
	busy  int       // reads or writes under way
}

// deadlineSlack is the fraction of a write deadline's distance it may be
// given late (1/deadlineSlack).
const deadlineSlack = 16

// set records t as the deadline, and applies it when an operation is
// under way.
func (d *lazyDeadline) set(t time.Time, c net.Conn, write bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.want = t
	if d.busy == 0 {
		return nil
	}
	return d.applyLocked(c, write)
}

// begin applies the deadline asked for before a read or write.
func (d *lazyDeadline) begin(c net.Conn, write bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.busy++
	if err := d.applyLocked(c, write); err != nil {
		d.busy--
		return err
	}
	return nil
}

// end marks a read or write begun with begin as done.
func (d *lazyDeadline) end() {
	d.mu.Lock()
	d.busy--
	d.mu.Unlock()
}

// applyLocked gives the connection the deadline asked for, when it
// holds another one (write deadlines: when it holds none that may stand,
// above).
func (d *lazyDeadline) applyLocked(c net.Conn, write bool) error {
	if d.want.Equal(d.armed) {
		return nil
	}
	t := d.want
	if write && !t.IsZero() {
		if !d.armed.IsZero() && !d.armed.Before(t) && d.armed.Sub(t) <= slackOf(t) {
			return nil
		}
		t = t.Add(slackOf(t))
	}
	var err error
	if write {
		err = c.SetWriteDeadline(t)
	} else {
		err = c.SetReadDeadline(t)
	}
	if err != nil {
		return err
	}
	d.armed = t
	return nil
}

// slackOf is how late write deadline t may be given: a sixteenth of its
// distance from now, none for one already past.
func slackOf(t time.Time) time.Duration {
	return max(time.Until(t)/deadlineSlack, 0)
}
