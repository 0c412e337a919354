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
