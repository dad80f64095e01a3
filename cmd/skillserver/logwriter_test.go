package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// gatedSink holds every Write until the test opens its gate.
type gatedSink struct {
	gate   chan struct{}
	mu     sync.Mutex
	out    bytes.Buffer
	writes int
}

// state is what the sink got so far: how many writes, and the bytes.
func (s *gatedSink) state() (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes, s.out.String()
}

func (s *gatedSink) Write(p []byte) (int, error) {
	<-s.gate
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.out.Write(p)
}

// TestLogWriterWaitsForASlowSink: while the output takes nothing, lines
// gather up to the buffer's bound; past it, loggers wait (nothing is
// dropped), and once the output drains every line is out, in fewer
// writes than lines: the lines logged one after another in their order,
// the waiting ones (concurrent loggers) in any order after them.
func TestLogWriterWaitsForASlowSink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &gatedSink{gate: make(chan struct{})}
		w := newLogWriter(sink, 20)
		line := func(i int) []byte { return fmt.Appendf(nil, "line %03d\n", i) } // 9 bytes
		// The first line goes to the sink's (blocked) write; two more fit
		// the buffer.
		for i := range 3 {
			if _, err := w.Write(line(i)); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		returned := make(chan int, 10)
		for i := 3; i < 6; i++ {
			go func() {
				_, _ = w.Write(line(i))
				returned <- i
			}()
			synctest.Wait() // each one in turn, so they queue in order
		}
		if len(returned) != 0 {
			t.Fatalf("%d writes past the bound returned while the sink took nothing", len(returned))
		}
		close(sink.gate)
		for range 3 {
			<-returned
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got := strings.SplitAfter(sink.out.String(), "\n")
		var want []string
		for i := range 6 {
			want = append(want, string(line(i)))
		}
		want = append(want, "")
		if len(got) == len(want) {
			slices.Sort(got[3:6])
		}
		if !slices.Equal(got, want) {
			t.Errorf("sink got %q, want %q", got, want)
		}
		if sink.writes >= 6 {
			t.Errorf("%d writes for 6 lines: nothing was batched", sink.writes)
		}
		// After Close, a line is written at once.
		_, _ = w.Write(line(6))
		if !strings.HasSuffix(sink.out.String(), string(line(6))) {
			t.Error("a line logged after Close was not written")
		}
	})
}

// TestLogWriterLongLine: a line longer than the bound waits for an empty
// buffer and is written whole.
func TestLogWriterLongLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &gatedSink{gate: make(chan struct{})}
		close(sink.gate)
		w := newLogWriter(sink, 8)
		long := strings.Repeat("x", 100) + "\n"
		for _, s := range []string{"a\n", long, "b\n"} {
			_, _ = w.Write([]byte(s))
		}
		_ = w.Close()
		if got, want := sink.out.String(), "a\n"+long+"b\n"; got != want {
			t.Errorf("sink got %q, want %q", got, want)
		}
	})
}

// TestLogWriterGathersLinesThatKeepComing: a line after a quiet moment is
// written at once; lines that follow within gather of that write go
// together in the next one, not one write each.
func TestLogWriterGathersLinesThatKeepComing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &gatedSink{gate: make(chan struct{})}
		close(sink.gate)
		w := newLogWriter(sink, 1<<20)
		defer w.Close()
		var want strings.Builder
		for i := range 10 {
			l := fmt.Sprintf("line %d\n", i)
			want.WriteString(l)
			_, _ = w.Write([]byte(l))
			synctest.Wait() // the writer did what it would
		}
		if n, out := sink.state(); n != 1 || out != "line 0\n" {
			t.Fatalf("before gather passed: %d writes of %q, want the first line alone", n, out)
		}
		time.Sleep(gather)
		synctest.Wait()
		if n, out := sink.state(); n != 2 || out != want.String() {
			t.Fatalf("after gather: %d writes of %q, want 2 of every line", n, out)
		}
		time.Sleep(time.Second)
		_, _ = w.Write([]byte("later\n"))
		synctest.Wait()
		if n, out := sink.state(); n != 3 || !strings.HasSuffix(out, "later\n") {
			t.Errorf("a line after a quiet second: %d writes, output %q; want it written at once", n, out)
		}
	})
}
