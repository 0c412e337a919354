package dbtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// removeStaleDirs deletes the temporary directories of earlier test
// processes that died without cleaning up (a panicking test, a -timeout, a
// Ctrl-C), so they do not pile up in /tmp. Directories of live processes,
// such as the other packages' test binaries under go test ./..., are left
// alone, as is any directory a postgres still runs in.
func removeStaleDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, dir := range dirs {
		rest := strings.TrimPrefix(filepath.Base(dir), tempPrefix)
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		if data, err := os.ReadFile(filepath.Join(dir, "postgres", "postmaster.pid")); err == nil {
			first, _, _ := strings.Cut(string(data), "\n")
			if pm, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && alive(pm) {
				continue
			}
		}
		_ = os.RemoveAll(dir)
	}
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || len(stat) < i+3 || (stat[i+2] != 'Z' && stat[i+2] != 'X')
}
