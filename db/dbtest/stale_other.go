//go:build !linux

package dbtest

// removeStaleDirs does nothing off Linux, where there is no embedded server
// and so no leftovers of one.
func removeStaleDirs() {}
