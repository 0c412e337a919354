package model

import "github.com/99designs/gqlgen/graphql"

// CustomFieldOptionPatch is the input of an option update: omitted fields
// keep their value. Position is Omittable so that an explicit null (clear
// the position) differs from an omitted one (keep it) — for GraphQL and
// for /v2 PATCH bodies alike.
type CustomFieldOptionPatch struct {
	Label    *string
	Value    *string
	Position graphql.Omittable[*int]
}

// Optional is an input field that tells an omitted value (keep what is
// stored) from a given one, null included (clear it): gqlgen's Omittable,
// which the generated inputs use. Transports other than GraphQL build it
// with Given and need not know gqlgen.
type Optional[T any] = graphql.Omittable[T]

// Given is the optional field given v.
func Given[T any](v T) Optional[T] { return graphql.OmittableOf(v) }
