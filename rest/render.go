package rest

import (
	"context"
	"net/http"
	"strings"

	"shipgraph/catalog"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
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
	ids      []string // scratch of linkage

	// Chunks the linkage of every rendered resource is carved from: one
	// allocation for many resources instead of two per resource and
	// to-many relationship (they live as long as the response).
	identChunk []Identifier
	relChunk   Relationships

	// withIncluded is set when the request asked for Includes: the
	// document then has an included member, [] when nothing was reached.
	withIncluded bool
}

func (s *server) newBuilder(base string, p *params) *builder {
	return &builder{
		res:          s.res,
		base:         base,
		primary:      map[Identifier]bool{},
		seen:         map[Identifier]bool{},
		withIncluded: p != nil && len(p.Include) > 0,
		fields:       fieldsOf(p),
	}
}

// setPrimary records the primary data so it is never repeated in included.
func (b *builder) setPrimary(rs ...*Resource) {
	for _, r := range rs {
		b.primary[r.Identifier()] = true
	}
}

// include adds a resource to included once, unless it is primary data.
func (b *builder) include(r *Resource) {
	id := r.Identifier()
	if b.primary[id] || b.seen[id] {
		return
	}
	b.seen[id] = true
	b.included = append(b.included, r)
}

// document assembles the top-level document.
func (b *builder) document(data any, links *jsonapi.Links, meta *jsonapi.Meta) *Document {
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

// sparse restricts rs to the fieldsets of the builder's request.
func (b *builder) sparse(rs []*Resource) {
	if len(b.fields) == 0 {
		return
	}
	for _, r := range rs {
		keep, ok := b.fields[r.Type]
		if !ok {
			continue
		}
		r.Sparse(keep)
	}
}

// writeOne answers a document whose data is one resource, with the
// resource's self link as the document's.
func (b *builder) writeOne(w http.ResponseWriter, r *http.Request, status int, data *Resource) {
	jsonapi.WriteDocument(w, r, status, b.document(data, &jsonapi.Links{Self: data.Links.Self}, nil))
}

func fieldsOf(p *params) map[string]map[string]bool {
	if p == nil {
		return nil
	}
	return p.Fields
}

// ---------------------------------------------------------------- relationships

// A shape is how /v2 renders the records of one resource type: its
// resource (attributes and links) and the relationships it shows, which
// the catalogue (catalog/) declares. Linkage, the load plan of a response
// and its included resources all derive from the shapes and the
// catalogue.
type shape struct {
	res     *catalog.Resource
	render  func(b *builder, rec any) *Resource
	members []*catalog.Rel // the relationships shown, in order
}

// shapeOf is the shape of res rendered by render, showing every
// relationship the catalogue gives it /v2 names, or only those named.
func shapeOf[T any](res *catalog.Resource, render func(*builder, T) *Resource, only ...string) *shape {
	s := &shape{res: res, render: func(b *builder, rec any) *Resource { return render(b, rec.(T)) }, members: res.Members()}
	if only != nil {
		s.members = membersOf(res, only...)
	}
	return s
}

// membersOf are the relationships of res named (JSON:API names).
func membersOf(res *catalog.Resource, names ...string) []*catalog.Rel {
	out := []*catalog.Rel{}
	for _, n := range names {
		rel := res.Member(n)
		if rel == nil {
			panic("rest: " + res.JSONAPI + " has no relationship " + n)
		}
		out = append(out, rel)
	}
	return out
}

// linkage is the relationships object of rec showing members: to-one
// linkage from the record's keys (the first target whose key is set), to-many
// from what the plan attached (or its linkage-only variant); a
// relationship of records Shipgraph does not hold is always [].
func (b *builder) linkage(rec any, members []*catalog.Rel) Relationships {
	rels := b.rels(len(members))
	for _, rel := range members {
		if !rel.Many {
			r := Relationship{Name: rel.JSONAPI}
			for _, t := range rel.Targets {
				if k := t.Key(rec); k != "" {
					r.One = Identifier{Type: t.Resource.JSONAPI, ID: k}
					break
				}
			}
			rels = append(rels, r)
			continue
		}
		var list []Identifier
		if len(rel.Targets) > 0 {
			t := rel.Targets[0]
			ids, ok := t.IDs(rec, b.ids[:0])
			if !ok && rel.Linkage != nil {
				ids, ok = rel.Linkage.Targets[0].IDs(rec, ids[:0])
			}
			b.ids = ids[:0]
			if !ok {
				panic("rest: " + rel.JSONAPI + " linkage of " + rel.Owner.JSONAPI + " " + rel.Owner.ID(rec) + " was not loaded")
			}
			list = b.idents(len(ids))
			for i, id := range ids {
				list[i] = Identifier{Type: t.Resource.JSONAPI, ID: id}
			}
		}
		rels = append(rels, jsonapi.ToMany(rel.JSONAPI, list))
	}
	return rels
}

// chunkSize is the least length of a linkage chunk.
const chunkSize = 256

// idents returns n identifiers carved from the builder's chunk (capped:
// an append to them never reaches the next ones).
func (b *builder) idents(n int) []Identifier {
	if n == 0 {
		return []Identifier{}
	}
	if len(b.identChunk)+n > cap(b.identChunk) {
		b.identChunk = make([]Identifier, 0, max(n, chunkSize))
	}
	i := len(b.identChunk)
	b.identChunk = b.identChunk[:i+n]
	return b.identChunk[i : i+n : i+n]
}

// rels returns an empty Relationships of capacity n carved from the
// builder's chunk.
func (b *builder) rels(n int) Relationships {
	if len(b.relChunk)+n > cap(b.relChunk) {
		b.relChunk = make(Relationships, 0, max(n, chunkSize))
	}
	i := len(b.relChunk)
	b.relChunk = b.relChunk[:i+n]
	return b.relChunk[i : i : i+n]
}

// includeTree is the include parameter as a tree of JSON:API names.
type includeTree map[string]includeTree

func includesOf(p *params) includeTree {
	t := includeTree{}
	for path := range p.Include {
		at := t
		for name := range strings.SplitSeq(path, ".") {
			next, ok := at[name]
			if !ok {
				next = includeTree{}
				at[name] = next
			}
			at = next
		}
	}
	return t
}

// withIncludes renders records of T as primary data of their shape
// (primaryShape) with the includes of p.
func withIncludes[T any](b *builder, ctx context.Context, rows []T, p *params) ([]*Resource, error) {
	return renderAll(b, ctx, rows, p, primaryShape[T]())
}

// renderAll renders rows as primary data of shape s with the includes of
// p, whose relationships the resolver layer loaded running the response's
// plan (planOf): the resources, then the included ones in relationship
// order.
func renderAll[T any](b *builder, _ context.Context, rows []T, p *params, s *shape) ([]*Resource, error) {
	inc := includesOf(p)
	data := make([]*Resource, len(rows))
	for i, r := range rows {
		data[i] = s.render(b, r)
	}
	b.setPrimary(data...)
	if len(inc) > 0 {
		var buf []any
		for _, r := range rows {
			buf = b.includeFrom(s, r, inc, buf)
		}
	}
	return data, nil
}

// includeFrom adds to included what rec of shape s reaches through inc.
func (b *builder) includeFrom(s *shape, rec any, inc includeTree, buf []any) []any {
	for _, rel := range s.members {
		sub, ok := inc[rel.JSONAPI]
		if !ok {
			continue
		}
		for _, t := range rel.Targets {
			start := len(buf)
			buf = t.Attached(rec, buf)
			ts := includedShape(rel, t.Resource)
			for i := start; i < len(buf); i++ {
				b.include(ts.render(b, buf[i]))
				if len(sub) > 0 {
					buf = b.includeFrom(ts, buf[i], sub, buf)
				}
			}
			buf = buf[:start]
		}
	}
	return buf
}

// includes is the include allow-list of a resource: its relationships'
// JSON:API names and aliases, and the nested paths given.
func includes(res *catalog.Resource, nested ...string) map[string]string {
	out := map[string]string{}
	for _, rel := range res.Members() {
		out[rel.JSONAPI] = rel.JSONAPI
		for _, a := range rel.Aliases {
			out[a] = rel.JSONAPI
		}
	}
	for _, path := range nested {
		at := res
		for name := range strings.SplitSeq(path, ".") {
			rel := at.Member(name)
			if rel == nil || len(rel.Targets) != 1 {
				panic("rest: include path " + path + " is not a path of single-target relationships")
			}
			at = rel.Targets[0].Resource
		}
		out[path] = path
	}
	return out
}

// The shapes of the resource types /v2 renders, all set here (in init:
// the renderers read their shape's members).
var (
	shipmentShape, containerShape, documentShape, terminalShape, railTerminalShape *shape
	trackingRequestShape, partyShape, customFieldShape                             *shape
	// A submission is primary data of its own endpoints with its
	// relationships, and included by a document without them.
	emailSubmissionPrimaryShape, emailSubmissionShape *shape
	// A document included by a submission: the OpenAPI document's
	// email_submission_document shape.
	emailDocumentShape *shape
	emailDocuments     = catalog.EmailSubmission.Member("documents")
	// Notifications and what they include; a container's journey.
	notificationShape, webhookShape, containerUpdatedEventShape, estimatedEventShape *shape
	transportEventShape, rawEventShape                                               *shape

	// includedShapes are the shapes of included resources, by type.
	includedShapes map[*catalog.Resource]*shape
)

func init() {
	shipmentShape = shapeOf(catalog.Shipment, shipmentResource)
	containerShape = shapeOf(catalog.Container, containerResource)
	documentShape = shapeOf(catalog.Document, documentResource)
	terminalShape = shapeOf(catalog.Terminal, terminalResource)
	railTerminalShape = shapeOf(catalog.RailTerminal, railTerminalResource)
	trackingRequestShape = shapeOf(catalog.TrackingRequest, trackingRequestResource)
	partyShape = shapeOf(catalog.Party, partyResource)
	customFieldShape = shapeOf(catalog.CustomField, customFieldResource)
	emailSubmissionPrimaryShape = shapeOf(catalog.EmailSubmission, emailSubmissionPrimary)
	emailSubmissionShape = shapeOf(catalog.EmailSubmission, emailSubmissionResource, []string{}...)
	emailDocumentShape = shapeOf(catalog.Document, emailDocumentResource, "last_document_representation")
	notificationShape = shapeOf(catalog.WebhookNotification, notificationResource)
	webhookShape = shapeOf(catalog.Webhook, webhookResource)
	containerUpdatedEventShape = shapeOf(catalog.ContainerUpdatedEvent, containerUpdatedEventResource)
	estimatedEventShape = shapeOf(catalog.EstimatedEvent, estimatedEventResource)
	transportEventShape = shapeOf(catalog.TransportEvent, transportEventResource)
	rawEventShape = shapeOf(catalog.RawEvent, rawEventResource)
	includedShapes = map[*catalog.Resource]*shape{}
	for _, s := range []*shape{
		shipmentShape, containerShape, documentShape, terminalShape, railTerminalShape, emailSubmissionShape,
		trackingRequestShape, partyShape,
		webhookShape, containerUpdatedEventShape, transportEventShape, estimatedEventShape, rawEventShape,
		shapeOf(catalog.Port, portResource),
		shapeOf(catalog.MetroArea, metroAreaResource),
		shapeOf(catalog.Account, accountResource),
		shapeOf(catalog.User, userResource),
		shapeOf(catalog.DocumentRepresentation, free(representationResource)),
		shapeOf(catalog.Vessel, vesselResource),
	} {
		includedShapes[s.res] = s
	}
}

// includedShape is the shape of a record of res included through rel.
func includedShape(rel *catalog.Rel, res *catalog.Resource) *shape {
	if rel == emailDocuments {
		return emailDocumentShape
	}
	s := includedShapes[res]
	if s == nil {
		panic("rest: no shape of included " + res.JSONAPI)
	}
	return s
}

// free adapts a resource function that needs no builder.
func free[T any](f func(T) *Resource) func(*builder, T) *Resource {
	return func(_ *builder, v T) *Resource { return f(v) }
}
