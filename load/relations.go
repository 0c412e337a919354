package load

import (
	"context"

	"shipgraph/catalog"
)

// The relationships the plan loads are the catalogue's (catalog/): each
// target of a relationship says where a record's key is, which read (and so
// which loader) loads it, and where the result is attached. A GraphQL field
// over an abstract type (destination, entity, …) has several targets, each
// keyed only when it applies.

// IsRelation reports whether field of the GraphQL type typ is a
// relationship the plan loads.
func IsRelation(typ, field string) bool {
	return catalog.ByGraphQL(typ).Rel(field) != nil
}

// ToManyFields are the to-many relationship fields of every type, by
// GraphQL type and field name, for the complexity estimate. Fields that
// read a list but return one record (customField(apiSlug)) are not.
func ToManyFields() map[string][]string {
	out := map[string][]string{}
	for _, res := range catalog.Resources() {
		for _, rel := range res.Rels {
			if rel.Many && rel.GraphQL != "" && rel.Via == nil {
				out[res.GraphQL] = append(out[res.GraphQL], rel.GraphQL)
			}
		}
	}
	return out
}

// anyLoader is a Loader of any value type, as the plan drives it.
type anyLoader interface {
	loadAny(ctx context.Context, keys []string) (map[string]any, error)
}

// loadAny reads keys in one batch; keys it does not find are left out.
func (x *Loader[V]) loadAny(ctx context.Context, keys []string) (map[string]any, error) {
	got, err := x.LoadAll(ctx, keys)
	if err != nil {
		return nil, err
	}
	m := make(map[string]any, len(got))
	for k, v := range got {
		m[k] = v
	}
	return m, nil
}
