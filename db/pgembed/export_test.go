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

func SetRelocateRoot(dir string) (restore func()) {
	old := relocateRoot
	relocateRoot = dir
	return func() { relocateRoot = old }
}

var Relocated = relocated
