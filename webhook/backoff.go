package webhook

import (
	"math/rand/v2"
	"time"
)

// MaxAttempts is how many times a notification is tried before it is
// failed.
const MaxAttempts = 12

// maxBackoff caps one wait, whatever the base.
const maxBackoff = 24 * time.Hour

// Backoff is the wait after the attempt-th failed attempt (1-based):
// exponential from base with full jitter, uniform in [0, base·2^(attempt-1)]
// (capped at a day), so that receivers coming back are not hit by every
// retry at once. r is a number in [0,1) (rand.Float64; tests pass their
// own).
func Backoff(base time.Duration, attempt int, r float64) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	ceil := base
	for i := 1; i < attempt && ceil < maxBackoff; i++ {
		ceil *= 2
	}
	ceil = min(ceil, maxBackoff)
	return time.Duration(r * float64(ceil))
}

func jitter() float64 { return rand.Float64() }
