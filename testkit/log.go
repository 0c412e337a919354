package testkit

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// Log is a log sink safe for concurrent writers (a server's slog handler,
// a process's stderr), which tests read and wait on. The zero value is
// ready.
type Log struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	grew chan struct{} // closed at the next write
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.grew != nil {
		close(l.grew)
		l.grew = nil
	}
	return l.buf.Write(p)
}

// String is everything written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Logger is a logger writing JSON records to l, one a line, at level and
// above.
func (l *Log) Logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: level}))
}

// Records are the JSON records written so far, one a line (a line that is
// not JSON fails tb).
func (l *Log) Records(tb testing.TB) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for line := range strings.Lines(l.String()) {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			tb.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// Find is the JSON records at level (as slog writes it: "INFO", "WARN",
// "ERROR" …) whose message contains msg.
func (l *Log) Find(tb testing.TB, level, msg string) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for _, r := range l.Records(tb) {
		if m, _ := r["msg"].(string); r["level"] == level && strings.Contains(m, msg) {
			out = append(out, r)
		}
	}
	return out
}

// WaitLine waits until a line written satisfies match and returns it;
// after timeout it fails tb, naming what it waited for and showing the
// log. It waits for writes, not for a clock.
func (l *Log) WaitLine(tb testing.TB, timeout time.Duration, what string, match func(line string) bool) string {
	tb.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		text := l.buf.String()
		if l.grew == nil {
			l.grew = make(chan struct{})
		}
		grew := l.grew
		l.mu.Unlock()
		for line := range strings.Lines(text) {
			if match(line) {
				return line
			}
		}
		select {
		case <-grew:
		case <-deadline.C:
			tb.Fatalf("waited %v for %s; the log:\n%s", timeout, what, text)
			return ""
		}
	}
}
