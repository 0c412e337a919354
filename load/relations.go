package load

import (
	"context"

	"shipgraph/db"
)

// The relationships the plan loads are the catalogue's (catalog/): each
// target of a relationship says where a record's key is, which read (and so
// which loader) loads it, and where the result is attached. A relationship
// over an abstract type (destination, entity, …) has several targets, each
// keyed only when it applies.

// anyLoader is a Loader of any value type, as the plan drives it.
type anyLoader interface {
	loadAny(ctx context.Context, keys []string) (found, error)
	// jointAny is loadAny as a part of a joint read (db.ReadJoint): the
	// part, and what keeps and returns its values once the read ran;
	// nil when the loader's read has no such form, or its keys are not
	// one fresh batch (some already read, or more than one batch).
	jointAny(keys []string) (db.JointPart, func() found)
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

func (x *Loader[V]) jointAny(keys []string) (db.JointPart, func() found) {
	if x.part == nil || len(keys) > x.maxBatch {
		return nil, nil
	}
	x.mu.Lock()
	for _, k := range keys {
		if _, ok := x.vals[k]; ok || x.absent[k] {
			x.mu.Unlock()
			return nil, nil
		}
	}
	x.mu.Unlock()
	part, values := x.part(keys)
	if part == nil {
		return nil, nil
	}
	return part, func() found {
		got := values()
		x.mu.Lock()
		defer x.mu.Unlock()
		x.remember(keys, got, len(keys))
		if allIn(got, keys) {
			return foundOf[V](got)
		}
		return foundOf[V](x.kept(keys))
	}
}
