package rest

import (
	"context"
	"strings"

	"shipgraph/load"
	"shipgraph/resolve"
)

// builder renders the resources of one response, and the included
// resources in the order they were first reached. Relationships come from
// the graph's load plan (load), which attaches them to the records: the
// same relationships, rules and statements as GraphQL.
type builder struct {
	res  *resolve.Resolver
	base string

	fields map[string]map[string]bool // sparse fieldsets by type

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
		primary:      map[Identifier]bool{},
		seen:         map[Identifier]bool{},
		withIncluded: p != nil && len(p.include) > 0,
		fields:       fieldsOf(p),
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
	switch v := data.(type) {
	case []*Resource:
		b.sparse(v)
	case *Resource:
		b.sparse([]*Resource{v})
	}
	b.sparse(b.included)
	d := &Document{Data: data, Links: links, Meta: meta}
	if b.withIncluded {
		d.Included = b.included
		if d.Included == nil {
			d.Included = []*Resource{}
		}
	}
	return d
}

func fieldsOf(p *params) map[string]map[string]bool {
	if p == nil {
		return nil
	}
	return p.fields
}

// load attaches to rows, through the graph's load plan, the relationships
// the response shows: the included ones (JSON:API names, which are the
// snake case of the GraphQL fields) and the linkage paths always needed
// (GraphQL names). One statement per relationship and level, whatever the
// page size.
func loadIncludes[T any](ctx context.Context, rows []T, p *params, always ...string) error {
	paths := always
	for name := range p.include {
		paths = append(paths, camel(name))
	}
	return load.Load(ctx, rows, load.NewPlan(paths...))
}

// camel converts a JSON:API relationship name to its GraphQL field:
// pod_terminal → podTerminal.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}
