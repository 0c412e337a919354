// Package simtest runs the carrier simulator for tests: over real HTTP on
// 127.0.0.1:0, on a clock the test moves. The connector's tests and the
// simulator's own use it.
package simtest

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"shipgraph/carrier/sim"
)

// Epoch anchors the voyages of every test that does not choose its own.
var Epoch = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// Clock is a simulator clock the test moves.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// Now is the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Server is a simulator serving on 127.0.0.1:0.
type Server struct {
	*sim.Sim
	URL   string // the simulator's root, http://127.0.0.1:port
	Clock *Clock
}

// Start serves a simulator of o until the test ends. Its clock starts at
// at (zero: Epoch) and is o's unless o brings its own Now; o.Epoch
// defaults to Epoch.
func Start(t testing.TB, o sim.Options, at time.Time) *Server {
	t.Helper()
	if at.IsZero() {
		at = Epoch
	}
	c := &Clock{t: at}
	if o.Now == nil {
		o.Now = c.Now
	}
	if o.Epoch.IsZero() {
		o.Epoch = Epoch
	}
	s, err := sim.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return &Server{Sim: s, URL: Serve(t, s), Clock: c}
}

// Serve serves s (on its own clock: the wall clock unless its options
// brought one) on 127.0.0.1 until the test ends and returns its base URL.
func Serve(t testing.TB, s *sim.Sim) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("simulator: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// Number is the first number of the simulator's list with scac, request
// type typ and state; the test fails when there is none.
func (s *Server) Number(t testing.TB, scac, typ, state string) sim.Number {
	t.Helper()
	for _, n := range s.Numbers() {
		if n.SCAC == scac && n.RequestType == typ && n.State == state {
			return n
		}
	}
	t.Fatalf("no %s %s of %s", state, typ, scac)
	return sim.Number{}
}
