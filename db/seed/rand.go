package seed

import (
	"encoding/hex"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"
)

// seedRand is the seeded generator behind every id, key and value of the
// demo data. Independent streams (one per concern) keep, for example, the
// API keys stable when only the number of shipments changes.
type seedRand struct{ *rand.Rand }

// Streams of seedRand: the second PCG word, so the same Seed gives
// unrelated sequences per concern.
const (
	seedStreamReference uint64 = 0x7265666572656e63 // "referenc"
	seedStreamAccounts  uint64 = 0x6163636f756e7473 // "accounts"
	seedStreamKeys      uint64 = 0x6170696b65797321 // "apikeys!"
	seedStreamFields    uint64 = 0x6669656c64646566 // "fielddef"
	seedStreamShipments uint64 = 0x7368697070696e67 // "shipping"
)

func newSeedRand(seed int64, stream uint64) *seedRand {
	return &seedRand{rand.New(rand.NewPCG(uint64(seed), stream))}
}

// uuid returns a random (version 4, RFC 9562 variant) UUID string.
func (r *seedRand) uuid() string {
	var b [16]byte
	hi, lo := r.Uint64(), r.Uint64()
	for i := range 8 {
		b[i] = byte(hi >> (56 - 8*i))
		b[8+i] = byte(lo >> (56 - 8*i))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return uuid.UUID(b).String()
}

// hex returns n random lowercase hex digits.
func (r *seedRand) hex(n int) string {
	b := make([]byte, (n+1)/2)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return hex.EncodeToString(b)[:n]
}

// chance is true with probability p.
func (r *seedRand) chance(p float64) bool { return r.Float64() < p }

// between returns a uniform float in [lo, hi).
func (r *seedRand) between(lo, hi float64) float64 { return lo + r.Float64()*(hi-lo) }

// days returns a duration of between lo and hi days, to the second.
func (r *seedRand) days(lo, hi float64) time.Duration {
	return time.Duration(r.between(lo, hi) * float64(24*time.Hour)).Truncate(time.Second)
}

// digits returns n random decimal digits.
func (r *seedRand) digits(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return string(b)
}

// letters returns n random capital letters.
func (r *seedRand) letters(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('A' + r.IntN(26))
	}
	return string(b)
}

// seedWeighted picks indexes in proportion to fixed weights.
type seedWeighted struct {
	cum   []int
	total int
}

func newSeedWeighted(weights ...int) seedWeighted {
	w := seedWeighted{cum: make([]int, len(weights))}
	for i, x := range weights {
		w.total += x
		w.cum[i] = w.total
	}
	return w
}

func (w seedWeighted) pick(r *seedRand) int {
	x := r.IntN(w.total)
	for i, c := range w.cum {
		if x < c {
			return i
		}
	}
	return len(w.cum) - 1
}

// seedPick returns a random element of s.
func seedPick[T any](r *seedRand, s []T) T { return s[r.IntN(len(s))] }
