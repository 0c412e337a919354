package datasync

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// ErrNoKey: SYNC_SECRET_KEY is not set, so no destination can be stored.
var ErrNoKey = errors.New("datasync: SYNC_SECRET_KEY is not set")

// Sealer seals destination URLs (they carry credentials) with AES-256-GCM
// before they are stored, and opens them for the worker.
type Sealer struct{ aead cipher.AEAD }

// NewSealer builds a sealer from the key setting: 32 bytes in standard
// base64 (`openssl rand -base64 32`). "" gives a sealer that refuses
// (ErrNoKey).
func NewSealer(key string) (*Sealer, error) {
	if key == "" {
		return &Sealer{}, nil
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) != 32 {
		return nil, fmt.Errorf("datasync: SYNC_SECRET_KEY must be 32 bytes in base64")
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// keyID tags what a key sealed, so a changed key is told from a corrupt
// value.
func (s *Sealer) keyID() []byte {
	sum := sha256.Sum256(s.aead.Seal(nil, make([]byte, s.aead.NonceSize()), nil, []byte("shipgraph datasync key id")))
	return sum[:4]
}

// Seal encrypts plain: key id, nonce, ciphertext.
func (s *Sealer) Seal(plain string) ([]byte, error) {
	if s.aead == nil {
		return nil, ErrNoKey
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append(s.keyID(), nonce...)
	return s.aead.Seal(out, nonce, []byte(plain), s.keyID()), nil
}

// Open decrypts what Seal returned.
func (s *Sealer) Open(sealed []byte) (string, error) {
	if s.aead == nil {
		return "", ErrNoKey
	}
	ns := s.aead.NonceSize()
	if len(sealed) < 4+ns {
		return "", errors.New("datasync: sealed URL too short")
	}
	if string(sealed[:4]) != string(s.keyID()) {
		return "", errors.New("datasync: the destination was sealed with another SYNC_SECRET_KEY")
	}
	plain, err := s.aead.Open(nil, sealed[4:4+ns], sealed[4+ns:], sealed[:4])
	if err != nil {
		return "", errors.New("datasync: the sealed URL does not open")
	}
	return string(plain), nil
}
