package transport

import (
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// countingConn counts the deadlines given to the connection under a
// trackedConn.
type countingConn struct {
	net.Conn
	reads, writes atomic.Int32
}

func (c *countingConn) SetReadDeadline(t time.Time) error {
	c.reads.Add(1)
	return c.Conn.SetReadDeadline(t)
}

func (c *countingConn) SetWriteDeadline(t time.Time) error {
	c.writes.Add(1)
	return c.Conn.SetWriteDeadline(t)
}

// lazyPipe is a trackedConn over one end of a pipe, the counts of what
// reaches that end, and the other end.
func lazyPipe(t *testing.T) (*trackedConn, *countingConn, net.Conn) {
	a, b := net.Pipe()
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	cc := &countingConn{Conn: a}
	return &trackedConn{Conn: cc}, cc, b
}

// TestReadDeadlinesApplyWhenRead: deadlines replaced before any read
// reach the connection not at all, the one in force when a read starts
// once, and a read bounded by it times out as it would have.
func TestReadDeadlinesApplyWhenRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc, cc, peer := lazyPipe(t)
		for i := range 5 {
			_ = tc.SetReadDeadline(time.Now().Add(time.Duration(i+1) * time.Second))
		}
		_ = tc.SetReadDeadline(time.Time{})
		if n := cc.reads.Load(); n != 0 {
			t.Fatalf("%d deadlines reached the connection before any read", n)
		}
		go func() { _, _ = peer.Write([]byte("x")) }()
		buf := make([]byte, 1)
		if _, err := tc.Read(buf); err != nil {
			t.Fatal(err)
		}
		// The zero deadline was asked for and the connection holds none:
		// nothing to give it.
		if n := cc.reads.Load(); n != 0 {
			t.Errorf("%d deadlines given for a read without one", n)
		}
		start := time.Now()
		_ = tc.SetReadDeadline(start.Add(3 * time.Second))
		if _, err := tc.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) != 3*time.Second {
			t.Errorf("read under a 3s deadline: %v after %s", err, time.Since(start))
		}
		if n := cc.reads.Load(); n != 1 {
			t.Errorf("%d deadlines given for one read, want 1", n)
		}
	})
}

// TestReadDeadlineWakesABlockedRead: a deadline set while a read waits
// (net/http's wake-up of its background read) applies to that read at
// once.
func TestReadDeadlineWakesABlockedRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc, _, _ := lazyPipe(t)
		done := make(chan error, 1)
		go func() {
			_, err := tc.Read(make([]byte, 1))
			done <- err
		}()
		synctest.Wait() // the read is blocked
		start := time.Now()
		_ = tc.SetReadDeadline(time.Unix(1, 0))
		if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) != 0 {
			t.Errorf("blocked read after a past deadline: %v after %s", err, time.Since(start))
		}
	})
}

// TestWriteDeadlineNeverEarly: a write that makes no progress fails no
// sooner than its deadline and at most a sixteenth of its distance later.
func TestWriteDeadlineNeverEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc, _, _ := lazyPipe(t) // nobody reads the peer
		start := time.Now()
		_ = tc.SetWriteDeadline(start.Add(16 * time.Second))
		_, err := tc.Write([]byte("stalled"))
		if took := time.Since(start); !errors.Is(err, os.ErrDeadlineExceeded) || took < 16*time.Second || took > 17*time.Second {
			t.Errorf("stalled write under a 16s deadline: %v after %s, want between 16s and 17s", err, took)
		}
	})
}

// TestWriteDeadlinesCoalesce: a write deadline moved on by less than the
// slack the connection holds reaches the connection once per slack, not
// once per write.
func TestWriteDeadlinesCoalesce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc, cc, peer := lazyPipe(t)
		go func() { _, _ = io.Copy(io.Discard, peer) }()
		const stall = 16 * time.Second // slack: 1s
		for range 10 {
			_ = tc.SetWriteDeadline(time.Now().Add(stall))
			if _, err := tc.Write([]byte("answer")); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if n := cc.writes.Load(); n != 1 {
			t.Errorf("10 writes within 0.5s: %d write deadlines given, want 1", n)
		}
		time.Sleep(2 * time.Second)
		_ = tc.SetWriteDeadline(time.Now().Add(stall))
		if _, err := tc.Write([]byte("answer")); err != nil {
			t.Fatal(err)
		}
		if n := cc.writes.Load(); n != 2 {
			t.Errorf("a write 2s later: %d write deadlines given, want 2", n)
		}
		_ = tc.SetWriteDeadline(time.Time{})
		if _, err := tc.Write([]byte("answer")); err != nil {
			t.Fatal(err)
		}
		if n := cc.writes.Load(); n != 3 {
			t.Errorf("no deadline after one: %d write deadlines given, want 3", n)
		}
	})
}
