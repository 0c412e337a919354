package app

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"testing"

	"shipgraph/config"
)

// TestGCDefaultsLeaveTheEnvironment: unset, GOGC and GOMEMLIMIT become the
// declared defaults; set, the user's values (which the runtime read at
// start) stay.
func TestGCDefaultsLeaveTheEnvironment(t *testing.T) {
	gc, limit := debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
	debug.SetGCPercent(gc)
	t.Cleanup(func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(limit) })
	want, err := strconv.Atoi(config.GOGC.Default)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{config.GOGC.Env, config.GOMEMLIMIT.Env} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	GCDefaults()
	if got := debug.SetGCPercent(100); got != want {
		t.Errorf("GOGC unset: GC percent %d, want %d", got, want)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("GOMEMLIMIT unset: limit %d, want 1 GiB (%s)", got, config.GOMEMLIMIT.Default)
	}

	t.Setenv(config.GOGC.Env, "150")
	t.Setenv(config.GOMEMLIMIT.Env, "300MiB")
	debug.SetGCPercent(150) // as the runtime read them at start
	debug.SetMemoryLimit(300 << 20)
	GCDefaults()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Errorf("GOGC=150: GC percent %d after GCDefaults", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Errorf("GOMEMLIMIT=300MiB: limit %d after GCDefaults", got)
	}
}
