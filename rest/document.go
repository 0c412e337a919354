package rest

import (
	"time"

	"shipgraph/rest/jsonapi"
)

// The document types of jsonapi by the short names the renderers use, and
// the conversions the attribute structs (generated and written) are built
// with.
type (
	Document      = jsonapi.Document
	Resource      = jsonapi.Resource
	Identifier    = jsonapi.Identifier
	Relationship  = jsonapi.Relationship
	Relationships = jsonapi.Relationships
	timestamp     = jsonapi.Time
)

func ts(t time.Time) timestamp { return timestamp(t) }

// tsp is ts for nullable times: the same value, not a copy.
func tsp(t *time.Time) *timestamp { return (*timestamp)(t) }

// orEmpty returns s, or an empty list for nil: a list the spec does not
// let be null (the jsonapi tag's nonnull).
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
