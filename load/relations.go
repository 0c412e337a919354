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
	loadAny(ctx context.Context, keys []string) (found, error)
}

// found is what a loader found for the keys it was given.
type found interface {
	get(key string) (any, bool)
}

type foundOf[V any] map[string]V

func (m foundOf[V]) get(key string) (any, bool) {
	v, ok := m[key]
	return v, ok
}

// loadAny reads keys in one batch; keys it does not find are left out.
func (x *Loader[V]) loadAny(ctx context.Context, keys []string) (found, error) {
	got, err := x.LoadAll(ctx, keys)
	if err != nil {
		return nil, err
	}
	return foundOf[V](got), nil
}
