// Package duckdbtest runs queries in a real DuckDB for tests: npm
// @duckdb/node-api through scripts/duckdb.sh, installed in a cache
// directory outside the repository on first use (make duckdb).
package duckdbtest

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Query runs queries in one DuckDB and returns each one's rows.
func Query(t testing.TB, queries ...string) [][][]any {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(here), "..", "..", "scripts", "duckdb.sh")
	cmd := exec.Command("bash", append([]string{script}, queries...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s\n%s", err, stderr.String(), strings.Join(queries, "\n"))
	}
	var rows [][][]any
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("duckdb's answer: %v\n%s", err, out)
	}
	return rows
}
