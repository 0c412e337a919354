package model

import (
	"strings"

	"github.com/99designs/gqlgen/graphql"
)

// Ids are normalised once, where they enter: the GraphQL ID scalar
// (UnmarshalID, bound in gqlgen.yml) and the /v2 router's path values.
// A UUID in any case becomes the lower-case form PostgreSQL prints, so
// loaders (keyed by the id string) and the store see one spelling; anything
// else (a port's UN/LOCODE) is left as it is.

// NormalizeID returns id lower-cased when it is a UUID (8-4-4-4-12 hex
// digits), else id unchanged.
func NormalizeID(id string) string {
	if !IsUUID(id) {
		return id
	}
	return strings.ToLower(id)
}

// IsUUID reports whether id is a UUID (8-4-4-4-12 hex digits, in any
// case).
func IsUUID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// MarshalID writes an ID as gqlgen does.
func MarshalID(id string) graphql.Marshaler { return graphql.MarshalID(id) }

// UnmarshalID reads an ID argument as gqlgen does, then normalises it.
func UnmarshalID(v any) (string, error) {
	id, err := graphql.UnmarshalID(v)
	return NormalizeID(id), err
}
