package rest

import (
	"context"
	"sync"

	"shipgraph/graph"
	"shipgraph/graph/model"
)

// builder renders the resources of one response. It holds the linkage of
// to-many relationships (which needs a query) for the resources it renders,
// and the included resources in the order they were first reached.
//
// Relationships are read through the field resolvers (the same rules as
// GraphQL), one level at a time: first every loader the level needs gets
// all its keys in one LoadAll (warm: one statement per loader, however many
// parents), then the field resolvers are called for every parent
// concurrently and find their rows in the loaders' cache. A page therefore
// costs a fixed number of statements whatever its size.
type builder struct {
	res  *graph.Resolver
	base string

	// To-many linkage by parent id.
	containersOf map[string][]*model.Container // shipment → containers
	shipmentsOf  map[string][]*model.Shipment  // document → shipments
	cargosOf     map[string][]*model.Container // document → containers

	primary  map[Identifier]bool
	included []*Resource
	seen     map[Identifier]bool
	// withIncluded is set when the request asked for includes: the
	// document then has an included member, [] when nothing was reached.
	withIncluded bool
}

func (s *server) newBuilder(base string, p *params) *builder {
	return &builder{
		res:          s.res,
		base:         base,
		containersOf: map[string][]*model.Container{},
		shipmentsOf:  map[string][]*model.Shipment{},
		cargosOf:     map[string][]*model.Container{},
		primary:      map[Identifier]bool{},
		seen:         map[Identifier]bool{},
		withIncluded: p != nil && len(p.include) > 0,
	}
}

// setPrimary records the primary data so it is never repeated in included.
func (b *builder) setPrimary(rs ...*Resource) {
	for _, r := range rs {
		b.primary[r.identifier()] = true
	}
}

// include adds a resource to included once, unless it is primary data.
func (b *builder) include(r *Resource) {
	id := r.identifier()
	if b.primary[id] || b.seen[id] {
		return
	}
	b.seen[id] = true
	b.included = append(b.included, r)
}

// document assembles the top-level document.
func (b *builder) document(data any, links *Links, meta *Meta) *Document {
	d := &Document{Data: data, Links: links, Meta: meta}
	if b.withIncluded {
		d.Included = b.included
		if d.Included == nil {
			d.Included = []*Resource{}
		}
	}
	return d
}

// fanout runs calls concurrently and keeps the first error.
type fanout struct {
	ctx context.Context
	wg  sync.WaitGroup
	mu  sync.Mutex
	err error
}

func newFanout(ctx context.Context) *fanout { return &fanout{ctx: ctx} }

func (f *fanout) do(fn func(context.Context) error) {
	f.wg.Go(func() {
		if err := fn(f.ctx); err != nil {
			f.mu.Lock()
			if f.err == nil {
				f.err = err
			}
			f.mu.Unlock()
		}
	})
}

func (f *fanout) wait() error {
	f.wg.Wait()
	return f.err
}

// each calls load for every parent concurrently; after f.wait the result
// holds the values in parent order.
func each[P, R any](f *fanout, parents []P, load func(context.Context, P) (R, error)) []R {
	out := make([]R, len(parents))
	for i, p := range parents {
		f.do(func(ctx context.Context) error {
			v, err := load(ctx, p)
			out[i] = v
			return err
		})
	}
	return out
}

// when returns parents if cond holds, else nothing (so each does no work).
func when[P any](cond bool, parents []P) []P {
	if cond {
		return parents
	}
	return nil
}

// at returns xs[i], or the zero value when xs is shorter (not loaded).
func at[T any](xs []T, i int) T {
	var zero T
	if i < len(xs) {
		return xs[i]
	}
	return zero
}

// loadShipmentLinkage reads the containers linkage of the shipments that
// do not have it yet: one statement.
func (b *builder) loadShipmentLinkage(ctx context.Context, ships []*model.Shipment) error {
	var todo []*model.Shipment
	seen := map[string]bool{}
	for _, s := range ships {
		if _, ok := b.containersOf[s.ID]; !ok && !seen[s.ID] {
			seen[s.ID] = true
			todo = append(todo, s)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	l, err := graph.For(ctx)
	if err != nil {
		return err
	}
	f := newFanout(ctx)
	warm(f, l.ContainersByShipmentID.LoadAll, keysOf(todo, func(s *model.Shipment) *string { return &s.ID }))
	if err := f.wait(); err != nil {
		return err
	}
	f = newFanout(ctx)
	got := each(f, todo, b.res.Shipment().Containers)
	if err := f.wait(); err != nil {
		return err
	}
	for i, s := range todo {
		b.containersOf[s.ID] = got[i]
	}
	return nil
}

// warm asks a loader for all of keys at once, before the field resolvers
// run. Batching by concurrent Loads alone depends on every goroutine
// reaching its Load within the loader's wait (a millisecond): with a few
// hundred goroutines that does not always hold, and a page would cost a
// varying number of statements. LoadAll adds every key to one batch from
// one goroutine; the field resolvers called next find the results (and
// any error, which they report) in the loader's cache.
func warm[T any](f *fanout, loadAll func(context.Context, []string) ([]T, error), keys []string) {
	if len(keys) == 0 {
		return
	}
	f.do(func(ctx context.Context) error {
		_, _ = loadAll(ctx, keys) // errors are cached; the resolvers return them
		return nil
	})
}

// keysOf returns the distinct non-empty keys of items, in order.
func keysOf[T any](items []T, key func(T) *string) []string {
	var out []string
	seen := map[string]bool{}
	for _, it := range items {
		if k := key(it); k != nil && *k != "" && !seen[*k] {
			seen[*k] = true
			out = append(out, *k)
		}
	}
	return out
}

// async starts fn (a count, say) alongside the rest of the request; the
// returned function waits for its result.
func async[T any](ctx context.Context, fn func(context.Context) (T, error)) func() (T, error) {
	var (
		v    T
		err  error
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		v, err = fn(ctx)
	}()
	return func() (T, error) {
		<-done
		return v, err
	}
}
