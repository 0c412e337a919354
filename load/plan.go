package load

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"

	"shipgraph/catalog"
	"shipgraph/db"
	"shipgraph/model"
)

// The load plan of a request says what each level of its response needs:
// which relationships (Plan.Rels) and which attributes (Plan.Fields, the
// columns the request reads). It speaks the catalogue's terms only: a
// relationship is a *catalog.Rel, an attribute a column of its resource.
// Each API translates its own names: GraphQL from the operation's
// selections (graph/plan.go), /v2 from `include` and `fields[type]`
// (rest/plan.go). resolve runs it: its reads (list, get, journey) select
// the columns before they read and load the relationships after; writes
// load them with resolve.Load. It runs level by level: for every level the
// keys of every relationship are gathered across all its records, each
// loader gets its keys in one LoadAll — one statement per relationship and
// level, whatever the page size — and the results are attached to the
// records (model.*Rel), which the GraphQL executor and /v2 then read
// without further loading. Loaders still deduplicate and cache by id
// within the request.

// Plan is the relationships one level needs, each with the plan of the
// level below it. A relationship applies to the records of its owner
// (rel.Owner): a plan over several types (a node, an included
// destination) names the relationships of each.
type Plan struct {
	Rels map[*catalog.Rel]*Plan
	// Fields, on the plan of a request's primary records, are the
	// columns the request reads of each resource (nil: every column, or
	// what the request decided before its first read).
	Fields Fields
}

// NewPlan returns the plan over records of res of dotted relationship
// paths of the catalogue's plan names (catalog.Resource.Rel), such as
// "transportEvents.vessel"; a path a target does not have is skipped.
func NewPlan(res *catalog.Resource, paths ...string) *Plan {
	p := &Plan{}
	for _, path := range paths {
		p.add(res, strings.Split(path, "."))
	}
	return p
}

func (p *Plan) add(res *catalog.Resource, names []string) {
	rel := res.Rel(names[0])
	if rel == nil {
		return
	}
	c := p.Child(rel)
	if len(names) > 1 {
		for _, t := range rel.Targets {
			c.add(t.Resource, names[1:])
		}
	}
}

// Child is the plan below rel, added when p has none.
func (p *Plan) Child(rel *catalog.Rel) *Plan {
	if p.Rels == nil {
		p.Rels = map[*catalog.Rel]*Plan{}
	}
	c, ok := p.Rels[rel]
	if !ok {
		c = &Plan{}
		p.Rels[rel] = c
	}
	return c
}

// Merge adds q's relationships to p.
func (p *Plan) Merge(q *Plan) {
	if q == nil {
		return
	}
	for rel, sub := range q.Rels {
		p.Child(rel).Merge(sub)
	}
}

// Select decides, before the request's first read, the columns it reads:
// the plan's Fields, when it has some (the first decision of a request
// stands: cached records keep the columns every part of the response
// needs).
func (p *Plan) Select(l *Loaders) {
	if p != nil && p.Fields != nil {
		l.Select(p.Fields)
	}
}

// Load attaches to rows the relationships plan names, and theirs below
// them. rows are records of the model (*model.Shipment, …); records of a
// type without relationships are left alone. Load may be called several
// times on the same records: what is attached stays.
func Load[T any](ctx context.Context, rows []T, plan *Plan) error {
	if plan == nil || len(plan.Rels) == 0 || len(rows) == 0 {
		return nil
	}
	l, err := For(ctx)
	if err != nil {
		return err
	}
	recs := make([]any, len(rows))
	for i, r := range rows {
		recs[i] = r
	}
	return l.run(ctx, recs, plan)
}

// level is the records of one level that share a plan.
type level struct {
	rows []any
	plan *Plan
}

// step is one target of one relationship of one level: the target, the
// records it applies to, and the plan of the level it leads to.
type step struct {
	target  *catalog.Target
	parents []any
	plan    *Plan
}

// run executes plan over rows level by level.
func (l *Loaders) run(ctx context.Context, rows []any, plan *Plan) error {
	levels := []level{{rows, plan}}
	for len(levels) > 0 {
		// Gather every relationship of the level with its keys, by loader.
		var steps []step
		type batch struct {
			ld   anyLoader
			keys []string
			seen map[string]bool
			got  found
		}
		batches := map[int]*batch{}
		var order []int
		for _, lv := range levels {
			byType := map[*catalog.Resource][]any{}
			if res := oneResource(lv.rows); res != nil {
				byType[res] = lv.rows // the common level: records of one type
			} else {
				var last *catalog.Resource
				var lastType reflect.Type
				for _, r := range lv.rows {
					if t := reflect.TypeOf(r); t != lastType || last == nil {
						lastType, last = t, catalog.Of(r)
					}
					if last != nil {
						byType[last] = append(byType[last], r)
					}
				}
			}
			for rel, sub := range lv.plan.Rels {
				if recs := byType[rel.Owner]; len(recs) > 0 {
					for _, t := range rel.Targets {
						steps = append(steps, step{t, recs, sub})
						id := t.Read.Index()
						b, ok := batches[id]
						if !ok {
							b = &batch{ld: l.reads[id], seen: make(map[string]bool, len(recs)), keys: make([]string, 0, len(recs))}
							batches[id] = b
							order = append(order, id)
						}
						for _, r := range recs {
							// Ids the record's own row carried need no read.
							if k := t.Key(r); k != "" && !b.seen[k] && !t.Held(r) {
								b.seen[k] = true
								b.keys = append(b.keys, k)
							}
						}
					}
				}
			}
		}
		// The loaders of the level whose reads can share a statement
		// (db.ReadJoint) read in pairs, in the catalogue's order of
		// reads (one statement text per pair); one left over reads
		// alone.
		type joint struct {
			id   int
			part db.JointPart
			keep func() found
			b    *batch
		}
		var joints []joint
		for _, id := range order {
			b := batches[id]
			if len(b.keys) == 0 {
				continue
			}
			if part, keep := b.ld.jointAny(b.keys); part != nil {
				joints = append(joints, joint{id, part, keep, b})
			}
		}
		slices.SortFunc(joints, func(x, y joint) int { return x.id - y.id })
		joints = joints[:len(joints)/2*2]
		paired := make(map[*batch]bool, len(joints))
		for _, j := range joints {
			paired[j.b] = true
		}
		// Every read of the level at once, a pair being one: the last
		// one runs on this goroutine.
		var runs []func() error
		for _, id := range order {
			b := batches[id]
			if len(b.keys) > 0 && !paired[b] {
				runs = append(runs, func() (err error) {
					b.got, err = b.ld.loadAny(ctx, b.keys)
					return err
				})
			}
		}
		for i := 0; i < len(joints); i += 2 {
			x, y := joints[i], joints[i+1]
			runs = append(runs, func() error {
				if err := l.readJoint(ctx, x.part, y.part); err != nil {
					return err
				}
				x.b.got, y.b.got = x.keep(), y.keep()
				return nil
			})
		}
		var wg sync.WaitGroup
		errs := make([]error, len(runs))
		for i, run := range runs {
			if i == len(runs)-1 {
				errs[i] = run()
			} else {
				wg.Go(func() { errs[i] = run() })
			}
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		// Attach, and collect the next level.
		levels = levels[:0:0]
		l.mu.Lock()
		gen := l.gen.Load()
		var children []any
		for _, s := range steps {
			b := batches[s.target.Read.Index()]
			var next []any
			var seen map[any]bool
			if len(s.plan.Rels) > 0 {
				seen = make(map[any]bool, len(s.parents))
			}
			for _, p := range s.parents {
				k := s.target.Key(p)
				if k == "" || b.got == nil {
					continue
				}
				v, ok := b.got.get(k)
				if !ok {
					continue
				}
				if p.(model.Related).Loads().Mark(gen, s.target.Bit) {
					s.target.Attach(p, v)
				}
				if len(s.plan.Rels) > 0 {
					children = s.target.Children(v, children[:0])
					for _, c := range children {
						if !seen[c] {
							seen[c] = true
							next = append(next, c)
						}
					}
				}
			}
			if len(next) > 0 {
				levels = append(levels, level{next, s.plan})
			}
		}
		l.mu.Unlock()
	}
	return nil
}

// readJoint runs a and b, batch reads of two loaders, as one statement,
// as LoadAll runs one loader's: the request's context checked first, the
// statement itself not watched (docs/decisions.md).
func (l *Loaders) readJoint(ctx context.Context, a, b db.JointPart) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.Store(ctx).ReadJoint(context.WithoutCancel(ctx), l.account, a, b)
}

// oneResource is the resource of rows when they are all records of one
// type of the catalogue, else nil.
func oneResource(rows []any) *catalog.Resource {
	if len(rows) == 0 {
		return nil
	}
	t := reflect.TypeOf(rows[0])
	for _, r := range rows[1:] {
		if reflect.TypeOf(r) != t {
			return nil
		}
	}
	return catalog.Of(rows[0])
}
