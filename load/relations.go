package load

import (
	"context"
)

// The relationships the plan loads are the catalogue's (catalog/): each
// target of a relationship says where a record's key is, which read (and so
// which loader) loads it, and where the result is attached. A relationship
// over an abstract type (destination, entity, …) has several targets, each
// keyed only when it applies.

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
