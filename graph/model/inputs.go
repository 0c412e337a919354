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

// SetPosition sets the position to v, or clears it when v is nil (an
// omitted position keeps the current one).
func (p *CustomFieldOptionPatch) SetPosition(v *int) { p.Position = graphql.OmittableOf(v) }
