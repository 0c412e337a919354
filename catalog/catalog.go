package catalog

import (
	"context"
	"fmt"
	"reflect"

	"shipgraph/db"
)

// Resource is one resource type: its names in the three vocabularies, how a
// record's id is read, the store read by id, and its relationships in the
// order /v2 shows them (linkage, included) followed by GraphQL-only ones.
type Resource struct {
	GraphQL string       // GraphQL object type: "Shipment"
	JSONAPI string       // JSON:API resource type: "shipment"
	Go      reflect.Type // the model type: *model.Shipment
	ByID    Read         // the batch read by id; nil when nothing reads it by id
	Rels    []*Rel

	id     func(any) string
	byPlan map[string]*Rel // by load plan name (GraphQL field or internal name)
	byJSON map[string]*Rel // by JSON:API member or alias
	bits   uint
}

// ID is the id of a record of the resource.
func (r *Resource) ID(rec any) string { return r.id(rec) }

// Rel is the relationship of r named name in the load plan: a GraphQL field
// name, or the internal name of a linkage-only variant (containerIDs). A
// field that reads another relationship (customField reads customFields)
// answers that relationship.
func (r *Resource) Rel(name string) *Rel {
	if r == nil {
		return nil
	}
	rel := r.byPlan[name]
	if rel != nil && rel.Via != nil {
		return rel.Via
	}
	return rel
}

// Member is the relationship whose JSON:API member (or include alias) is
// name, nil when the resource has none.
func (r *Resource) Member(name string) *Rel { return r.byJSON[name] }

// Members are the relationships /v2 shows, in order.
func (r *Resource) Members() []*Rel {
	var out []*Rel
	for _, rel := range r.Rels {
		if rel.JSONAPI != "" {
			out = append(out, rel)
		}
	}
	return out
}

// Rel is one relationship of one resource type.
type Rel struct {
	Owner *Resource
	// Go is the record's Rel slot that holds the relationship ("" for a
	// field reading another relationship's slot, see Via); with several
	// targets, each has its own slot (Target.Slot).
	Go      string
	GraphQL string // the GraphQL field, "" when GraphQL has none
	JSONAPI string // the JSON:API member, "" when /v2 shows none
	// Aliases are further names /v2's include accepts for it.
	Aliases []string
	Many    bool
	// Targets are the types it may lead to, each with its key: one for a
	// concrete field; for an abstract one (Shipment.destination), in order
	// of precedence, the first whose key is set applies. None: a /v2
	// relationship of records Shipgraph does not hold (linkage always []).
	Targets []*Target
	// Linkage is the linkage-only variant of a to-many relationship: the
	// ids alone, read when the records are not included.
	Linkage *Rel
	// Via is the relationship a field reads (customField(apiSlug) reads
	// customFields); the field has no storage of its own.
	Via *Rel
	// Internal names a relationship that is no GraphQL field and no /v2
	// member: a linkage-only variant, loaded by that name.
	Internal string
}

// PlanName is the relationship's name in the load plan.
func (r *Rel) PlanName() string {
	if r.Internal != "" {
		return r.Internal
	}
	return r.GraphQL
}

// Target is one target type of a relationship.
type Target struct {
	Resource *Resource
	KeyCol   string // the parent's column holding the key ("id" for to-many reads)
	Read     Read   // the batch read that loads it
	Bit      uint   // its bit in the parent's model.Loaded
	Slot     string // the Rel slot it is attached to
	// HeldCol, on a linkage-only target, is the parent's column that
	// carries the ids when its read selected it (see Held).
	HeldCol string

	key      func(parent any) string
	attach   func(parent, v any)
	attached func(parent any, out []any) []any
	children func(v any, out []any) []any
	ids      func(parent any, out []string) ([]string, bool)
	held     func(parent any) bool
	isIDs    bool
}

// Held reports whether parent's own row carried the target's ids
// (HeldCol): loading them then needs no read.
func (t *Target) Held(parent any) bool { return t.held != nil && t.held(parent) }

// Key is the key a parent reads the target by, "" when the parent has none
// (or another target applies).
func (t *Target) Key(parent any) string { return t.key(parent) }

// Attach stores v, a value of the target's read, on parent.
func (t *Target) Attach(parent, v any) { t.attach(parent, v) }

// Children appends the records of v, a value of the target's read.
func (t *Target) Children(v any, out []any) []any { return t.children(v, out) }

// Attached appends the records attached to parent.
func (t *Target) Attached(parent any, out []any) []any { return t.attached(parent, out) }

// IDs appends the ids of what is attached to parent, and reports whether
// anything (an empty list included) was attached.
func (t *Target) IDs(parent any, out []string) ([]string, bool) { return t.ids(parent, out) }

// Read is a batch read of the store behind one loader: by id, by parent id,
// or over a join table.
type Read interface {
	Name() string // the loaders' field: "PortByID"
	Index() int   // its place in Reads
}

// ReadOf is a Read whose values are V: a record (by id) or a list (by
// parent).
type ReadOf[V any] struct {
	name  string
	index int
	fetch func(ctx context.Context, s *db.DB, accountID string, ids []string) (map[string]V, error)
	part  func(ids []string) (db.JointPart, func() map[string]V)
}

// Part is the read of ids as a part of a joint read (db.ReadJoint), with
// what makes its values from the part's rows once the joint read ran;
// nil when the read has no such form.
func (r *ReadOf[V]) Part(ids []string) (db.JointPart, func() map[string]V) {
	if r.part == nil {
		return nil, nil
	}
	return r.part(ids)
}

func (r *ReadOf[V]) Name() string { return r.name }
func (r *ReadOf[V]) Index() int   { return r.index }

// Fetch reads ids for the account in one statement; to-many reads answer
// an empty list for a parent without rows, by-id reads leave out ids they
// do not find.
func (r *ReadOf[V]) Fetch(ctx context.Context, s *db.DB, accountID string, ids []string) (map[string]V, error) {
	return r.fetch(ctx, s, accountID, ids)
}

var reads []Read

// Reads are every batch read of the catalogue, by Index.
func Reads() []Read { return reads }

func newRead[V any](name string, fetch func(context.Context, *db.DB, string, []string) (map[string]V, error)) *ReadOf[V] {
	r := &ReadOf[V]{name: name, index: len(reads), fetch: fetch}
	reads = append(reads, r)
	return r
}

// tenantByID is a read by id of account data.
func tenantByID[T any](name string, f func(*db.DB, context.Context, string, []string) ([]T, error), id func(T) string) *ReadOf[T] {
	return newRead(name, func(ctx context.Context, s *db.DB, acct string, ids []string) (map[string]T, error) {
		rows, err := f(s, ctx, acct, ids)
		return byKey(rows, err, id)
	})
}

// sharedByID is a read by id of reference data, shared by every account.
func sharedByID[T any](name string, f func(*db.DB, context.Context, []string) ([]T, error), id func(T) string) *ReadOf[T] {
	return newRead(name, func(ctx context.Context, s *db.DB, _ string, ids []string) (map[string]T, error) {
		rows, err := f(s, ctx, ids)
		return byKey(rows, err, id)
	})
}

func byKey[T any](rows []T, err error, key func(T) string) (map[string]T, error) {
	if err != nil {
		return nil, err
	}
	m := make(map[string]T, len(rows))
	for _, r := range rows {
		m[key(r)] = r
	}
	return m, nil
}

// byParent is a to-many read whose rows carry the parent key.
func byParent[T any](name string, f func(*db.DB, context.Context, string, []string) ([]T, error), parent func(T) string) *ReadOf[[]T] {
	return newRead(name, func(ctx context.Context, s *db.DB, acct string, ids []string) (map[string][]T, error) {
		rows, err := f(s, ctx, acct, ids)
		if err != nil {
			return nil, err
		}
		return groupByParent(ids, rows, parent), nil
	})
}

// byParentBatch is byParent over a batch read of the store, which a load
// plan's level may run together with its other reads in one statement
// (db.ReadJoint).
func byParentBatch[T any](name string, b *db.Batch[T], parent func(*T) string) *ReadOf[[]*T] {
	r := byParent(name, func(s *db.DB, ctx context.Context, acct string, ids []string) ([]*T, error) {
		return b.Read(ctx, s, acct, ids)
	}, parent)
	r.part = func(ids []string) (db.JointPart, func() map[string][]*T) {
		p := b.Part(ids)
		return p, func() map[string][]*T { return groupByParent(ids, p.Rows, parent) }
	}
	return r
}

// groupByParent is a to-many read's value: rows by parent key, every id
// with a (possibly empty) list.
func groupByParent[T any](ids []string, rows []T, parent func(T) string) map[string][]T {
	m := emptyLists[T](ids)
	// Rows come grouped by parent (the reads order by it): each
	// parent's list is its run of rows, sharing their array. Rows of
	// a parent met again after another's are appended to a copy.
	for start := 0; start < len(rows); {
		p := parent(rows[start])
		end := start + 1
		for end < len(rows) && parent(rows[end]) == p {
			end++
		}
		if have := m[p]; len(have) > 0 {
			m[p] = append(have, rows[start:end]...)
		} else {
			m[p] = rows[start:end:end]
		}
		start = end
	}
	return m
}

// byLink is a to-many read over a join table.
func byLink[T any](name string, f func(*db.DB, context.Context, string, []string) ([]db.Linked[T], error)) *ReadOf[[]T] {
	return newRead(name, func(ctx context.Context, s *db.DB, acct string, ids []string) (map[string][]T, error) {
		rows, err := f(s, ctx, acct, ids)
		if err != nil {
			return nil, err
		}
		return groupLinks(ids, rows), nil
	})
}

// byLinkBatch is byLink over a batch read of the store, which a load
// plan's level may run together with its other reads in one statement
// (db.ReadJoint).
func byLinkBatch[T any](name string, b *db.LinkBatch[T]) *ReadOf[[]T] {
	r := byLink(name, func(s *db.DB, ctx context.Context, acct string, ids []string) ([]db.Linked[T], error) {
		return b.Read(ctx, s, acct, ids)
	})
	r.part = func(ids []string) (db.JointPart, func() map[string][]T) {
		p, links := b.Part(ids)
		return p, func() map[string][]T { return groupLinks(ids, links()) }
	}
	return r
}

// groupLinks is a read over a join table's value: items by parent id,
// every id with a (possibly empty) list.
func groupLinks[T any](ids []string, rows []db.Linked[T]) map[string][]T {
	m := emptyLists[T](ids)
	for _, r := range rows {
		m[r.ParentID] = append(m[r.ParentID], r.Item)
	}
	return m
}

// emptyLists gives every parent an empty (non-nil) list: a parent with no
// rows has none rather than not-found.
func emptyLists[T any](ids []string) map[string][]T {
	m := make(map[string][]T, len(ids))
	for _, id := range ids {
		m[id] = []T{}
	}
	return m
}

// ---------------------------------------------------------------- declaring

var (
	resources []*Resource
	byGraphQL = map[string]*Resource{}
	byJSONAPI = map[string]*Resource{}
	byGo      = map[reflect.Type]*Resource{}
)

// Resources are every resource type, in declaration order.
func Resources() []*Resource { return resources }

// ByGraphQL is the resource of a GraphQL object type, nil for none.
func ByGraphQL(name string) *Resource { return byGraphQL[name] }

// ByJSONAPI is the resource of a JSON:API type, nil for none.
func ByJSONAPI(name string) *Resource { return byJSONAPI[name] }

// Of is the resource of a record (*model.Shipment, …), nil for none.
func Of(rec any) *Resource { return byGo[reflect.TypeOf(rec)] }

// resource declares a resource type whose records are T.
func resource[T any](graphQL, jsonAPI string, id func(T) string, byID *ReadOf[T]) *Resource {
	r := &Resource{GraphQL: graphQL, JSONAPI: jsonAPI, Go: reflect.TypeFor[T](),
		id: func(v any) string { return id(v.(T)) }, byPlan: map[string]*Rel{}, byJSON: map[string]*Rel{}}
	if byID != nil {
		r.ByID = byID
	}
	resources = append(resources, r)
	byGraphQL[graphQL] = r
	byJSONAPI[jsonAPI] = r
	byGo[r.Go] = r
	return r
}

// rel adds a relationship to its owner.
func (r *Resource) rel(rel *Rel) *Rel {
	rel.Owner = r
	for _, t := range rel.Targets {
		if rel.Via == nil {
			if r.bits == 64 {
				panic("catalog: more than 64 relationships of " + r.GraphQL)
			}
			t.Bit = r.bits
			r.bits++
		}
	}
	if rel.Go == "" && len(rel.Targets) == 1 {
		rel.Go = rel.Targets[0].Slot
	}
	name := rel.PlanName()
	if name != "" {
		if r.byPlan[name] != nil {
			panic(fmt.Sprintf("catalog: %s.%s declared twice", r.GraphQL, name))
		}
		r.byPlan[name] = rel
	}
	for _, n := range append([]string{rel.JSONAPI}, rel.Aliases...) {
		if n != "" {
			r.byJSON[n] = rel
		}
	}
	r.Rels = append(r.Rels, rel)
	return rel
}

// one is a to-one target read by id: key is the parent's foreign key (nil:
// none), slot the Rel field it is attached to.
func one[P, C any](to *Resource, keyCol string, key func(P) *string, slotName string, slot func(P) *C, read *ReadOf[C]) *Target {
	return &Target{
		Resource: to, KeyCol: keyCol, Read: read, Slot: slotName,
		key: func(p any) string {
			if k := key(p.(P)); k != nil {
				return *k
			}
			return ""
		},
		attach: func(p, v any) { *slot(p.(P)) = v.(C) },
		attached: func(p any, out []any) []any {
			if v := *slot(p.(P)); !isNil(v) {
				out = append(out, v)
			}
			return out
		},
		children: func(v any, out []any) []any { return append(out, v) },
		ids: func(p any, out []string) ([]string, bool) {
			if k := key(p.(P)); k != nil {
				return append(out, *k), true
			}
			return out, true
		},
	}
}

func isNil[C any](v C) bool {
	var zero C
	return any(v) == any(zero)
}

// many is a to-many target read by the parent's key.
func many[P, C any](to *Resource, key func(P) string, slotName string, slot func(P) *[]C, read *ReadOf[[]C]) *Target {
	return &Target{
		Resource: to, KeyCol: "id", Read: read, Slot: slotName,
		key:    func(p any) string { return key(p.(P)) },
		attach: func(p, v any) { *slot(p.(P)) = v.([]C) },
		attached: func(p any, out []any) []any {
			for _, c := range *slot(p.(P)) {
				out = append(out, c)
			}
			return out
		},
		children: func(v any, out []any) []any {
			for _, c := range v.([]C) {
				out = append(out, c)
			}
			return out
		},
		ids: func(p any, out []string) ([]string, bool) {
			xs := *slot(p.(P))
			for _, c := range xs {
				out = append(out, to.id(c))
			}
			return out, xs != nil
		},
	}
}

// manyIDs is a linkage-only to-many target: the ids alone.
func manyIDs[P any](to *Resource, key func(P) string, slotName string, slot func(P) *[]string, read *ReadOf[[]string]) *Target {
	t := many(to, key, slotName, slot, read)
	t.isIDs = true
	t.children = func(any, []any) []any { return nil }
	t.attached = func(_ any, out []any) []any { return out }
	t.ids = func(p any, out []string) ([]string, bool) {
		xs := *slot(p.(P))
		return append(out, xs...), xs != nil
	}
	return t
}

// heldIn makes the linkage-only target t readable from the parent's
// column col (its ids, ids(parent); nil when the read did not select it),
// before any read.
func heldIn[P any](t *Target, col string, ids func(P) []string) *Target {
	attached := t.ids
	t.HeldCol = col
	t.held = func(p any) bool { return ids(p.(P)) != nil }
	t.ids = func(p any, out []string) ([]string, bool) {
		if out, ok := attached(p, out); ok {
			return out, true
		}
		xs := ids(p.(P))
		return append(out, xs...), xs != nil
	}
	return t
}

// unless returns key, or nil when other is set: for the targets of one
// abstract field, the one that applies.
func unless(other, key *string) *string {
	if other != nil {
		return nil
	}
	return key
}

// ToManyFields are the to-many relationship fields of every type, by
// GraphQL type and field name, for GraphQL's complexity estimate. Fields
// that read a list but return one record (customField(apiSlug)) are not.
func ToManyFields() map[string][]string {
	out := map[string][]string{}
	for _, res := range Resources() {
		for _, rel := range res.Rels {
			if rel.Many && rel.GraphQL != "" && rel.Via == nil {
				out[res.GraphQL] = append(out[res.GraphQL], rel.GraphQL)
			}
		}
	}
	return out
}
