package main

import (
	"io"
	"sync"
	"time"
)

// logWriter takes log lines off the goroutines that log them: Write
// appends the line to a buffer and returns; one goroutine writes what has
// gathered to the output, a batch per write, while the next batch
// gathers, for at least gather after the last write. A request then pays
// for a copy, not for a write system call; a line waits at most gather
// (and for the output).
//
// Nothing is dropped: when max bytes are waiting (the output is slower
// than the logging, e.g. a full pipe), Write waits for room, as a
// synchronous write would have waited for the output. A line longer than
// max waits for an empty buffer and goes alone. Close writes what is
// left and returns once it is out; lines logged after Close are written
// synchronously. An error of the output is not reported (slog drops a
// handler's write error too); the lines of a failed write are lost.
type logWriter struct {
	out io.Writer
	max int

	mu      sync.Mutex
	room    *sync.Cond // signalled when a batch was written
	pending []byte
	spare   []byte
	closed  bool
	wake    chan struct{} // a line is pending
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newLogWriter(out io.Writer, max int) *logWriter {
	w := &logWriter{out: out, max: max, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	w.room = sync.NewCond(&w.mu)
	go w.run()
	return w
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	for !w.closed && len(w.pending) > 0 && len(w.pending)+len(p) > w.max {
		w.room.Wait()
	}
	if w.closed {
		// Close has written everything; keep the order by writing under
		// the lock.
		defer w.mu.Unlock()
		return w.out.Write(p)
	}
	w.pending = append(w.pending, p...)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

// gather is the least time between two writes while lines keep coming:
// a line logged after a quiet moment is written at once, and those that
// follow within gather go together in the next write. Under load that is
// one write, and one wake-up of this goroutine, per gather, not one per
// line or few (each was a thread woken and a write system call).
const gather = 5 * time.Millisecond

func (w *logWriter) run() {
	defer close(w.done)
	var last time.Time // of the last write
	timer := time.NewTimer(0)
	<-timer.C
	for {
		select {
		case <-w.wake:
		case <-w.stop:
			w.finish()
			return
		}
		if wait := gather - time.Since(last); !last.IsZero() && wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-w.stop:
				timer.Stop()
				w.finish()
				return
			}
		}
		last = time.Now()
		w.mu.Lock()
		batch := w.pending
		w.pending = w.spare[:0]
		w.mu.Unlock()
		if len(batch) > 0 {
			_, _ = w.out.Write(batch)
		}
		w.mu.Lock()
		if cap(batch) <= 2*w.max {
			w.spare = batch // a batch past max (one long line) is not kept
		} else {
			w.spare = nil
		}
		w.room.Broadcast()
		w.mu.Unlock()
	}
}

// finish writes what is pending; later lines are written synchronously.
func (w *logWriter) finish() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) > 0 {
		_, _ = w.out.Write(w.pending)
	}
	w.pending, w.closed = nil, true
	w.room.Broadcast()
}

// Close writes the pending lines and stops the background writer.
func (w *logWriter) Close() error {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	return nil
}
