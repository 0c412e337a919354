package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// SignatureHeader carries Sign's value on every delivery, as the public
// service does.
const SignatureHeader = "X-T49-Webhook-Signature"

// Sign is the signature of one delivery: hex(HMAC-SHA256(secret, body)) over
// the exact bytes sent.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify is what a receiver does: it recomputes the signature of the body it
// got and compares in constant time.
func Verify(secret string, body []byte, signature string) bool {
	want, err := hex.DecodeString(signature)
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal(m.Sum(nil), want)
}
