package files_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"shipgraph/files"
)

// TestSignedIDsRoundTrip: every signed id verifies to its upload id, and a
// tampered one does not. The body of a signed id is base64url, which may
// hold "--" itself (about one id in a hundred): the split must not depend
// on the separator being unique.
func TestSignedIDsRoundTrip(t *testing.T) {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	s, err := files.Open(context.Background(), files.Config{Dir: t.TempDir(), Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	for i := range 5000 {
		var b [16]byte
		_, _ = rand.Read(b[:])
		id := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
		signed := s.SignID(id, now)
		got, ok := s.VerifyID(signed, now)
		if !ok || got != id {
			t.Fatalf("id %d: %s signed as %q verified as %q, %v", i, id, signed, got, ok)
		}
		for _, at := range []int{0, 20, len(signed) - 5, len(signed) - 1} {
			tampered := []byte(signed)
			tampered[at] ^= 1
			if _, ok := s.VerifyID(string(tampered), now); ok {
				t.Fatalf("%q tampered at %d verified", tampered, at)
			}
		}
	}
}
