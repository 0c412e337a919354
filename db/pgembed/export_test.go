//go:build linux

package pgembed

import "time"

// Hooks for the external tests in pgembed_test.

var CheckClusterInUse = checkClusterInUse

func SetBinGlobRoot(root string) (restore func()) {
	old := binGlobRoot
	binGlobRoot = root
	return func() { binGlobRoot = old }
}

func SetStaleWait(d time.Duration) (restore func()) {
	old := staleWait
	staleWait = d
	return func() { staleWait = old }
}

func SetFreePort(f func() (int, error)) (restore func()) {
	old := freePort
	freePort = f
	return func() { freePort = old }
}
