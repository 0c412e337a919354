package rest

import (
	"context"
	"net/http"

	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// The steps the handlers share: parse the query string, read through the
// resolvers, render, answer. The handlers give the resource-specific
// pieces: the endpoint, how to read, how to render.

// renderer renders records as primary data with the includes of p (the
// builder's documents, shipments, containers…).
type renderer[T any] func(b *builder, ctx context.Context, items []T, p *params) ([]*Resource, error)

// plain is the renderer of a resource type without includes.
func plain[T any](render func(*builder, T) *Resource) renderer[T] {
	return func(b *builder, _ context.Context, items []T, _ *params) ([]*Resource, error) {
		data := make([]*Resource, len(items))
		for i, it := range items {
			data[i] = render(b, it)
		}
		return data, nil
	}
}

// listPage is one page of a list, as a handler's read function got it.
type listPage[T any] struct {
	nodes   []T
	hasNext bool
	// hasPrev says whether records precede the page (known for keyset
	// reads); start and end are the cursors of its first and last
	// records, "" for lists read whole.
	hasPrev    bool
	start, end string
	// count reads the number of records of the whole (filtered) list.
	count func(context.Context) (int, error)
}

// fromPage is the page the resolver layer read; count counts the whole
// (filtered) list.
func fromPage[T any](pg *resolve.Page[T], count func(context.Context) (int, error)) listPage[T] {
	return listPage[T]{nodes: pg.Items, hasNext: pg.HasNext, hasPrev: pg.HasPrevious, start: pg.Start, end: pg.End, count: count}
}

// memoryPage slices a list read whole (a definition's options, a
// shipment's custom fields) like the store slices a table, so every list
// pages the same way.
func memoryPage[T any](all []T, p model.PageInput) listPage[T] {
	start := min((p.Number-1)*p.Size, len(all))
	end := min(start+p.Size, len(all))
	return listPage[T]{nodes: all[start:end], hasNext: end < len(all), count: func(context.Context) (int, error) { return len(all), nil }}
}

// serveList answers GET of a list: read gets the page for the parsed
// parameters (its filters and sort are the handler's), render renders it,
// and the document has page links and meta.
func serveList[T any](s *server, w http.ResponseWriter, r *http.Request, e endpoint, read func(context.Context, *params) (listPage[T], error), render renderer[T]) {
	ctx := r.Context()
	p, err := parseParams(r, e)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	p.plan = planOf(primaryShape[T](), p)
	pg, err := read(ctx, p)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	b := s.newBuilder(s.baseURL(r), p)
	data, err := render(b, ctx, pg.nodes, p)
	var n int
	if err == nil {
		// The unfiltered total is a counter row, a filtered one a count.
		n, err = pg.count(ctx)
	}
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	jsonapi.WriteDocument(w, r, http.StatusOK, b.document(data, jsonapi.PageLinks(b.base, r, p.Query, n, pg.hasNext, pg.hasPrev, pg.start, pg.end), &jsonapi.Meta{Size: p.Page.Size, Total: n}))
}

// serveOne answers GET of one record: get reads it by the {id} of the
// path (the resolver layer, whose not found covers an unknown, malformed
// or another account's id) and runs the plan of the response on it,
// render renders it with the includes asked for.
func serveOne[T any](s *server, w http.ResponseWriter, r *http.Request, e endpoint, get func(context.Context, *model.Principal, string, *resolve.Plan) (*T, error), render renderer[*T]) {
	p, err := parseParams(r, e)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	p.plan = planOf(primaryShape[*T](), p)
	v, err := get(r.Context(), who(r), r.PathValue("id"), p.plan)
	serveRecord(s, w, r, p, v, err, render)
}

// serveWritten answers with a record a write returned: the plan of the
// response runs on it (resolve.Load, as GraphQL's mutations do), then
// serveRecord.
func serveWritten[T any](s *server, w http.ResponseWriter, r *http.Request, p *params, v *T, err error, render renderer[*T]) {
	if err == nil {
		err = loadWritten(r.Context(), p, []*T{v})
	}
	serveRecord(s, w, r, p, v, err, render)
}

// loadWritten runs on records a write returned the plan of a response
// showing them with the includes of p.
func loadWritten[T any](ctx context.Context, p *params, rows []T) error {
	return resolve.Load(ctx, rows, planOf(primaryShape[T](), p))
}

// serveRecord answers with one record, read or just written, rendered
// with the includes p asks for (or with err).
func serveRecord[T any](s *server, w http.ResponseWriter, r *http.Request, p *params, v *T, err error, render renderer[*T]) {
	answerRecord(s, w, r, p, v, err, render, http.StatusOK)
}

// serveCreated answers a create: the record with the plan of p run on it,
// 201 and its Location (or err).
func serveCreated[T any](s *server, w http.ResponseWriter, r *http.Request, p *params, v *T, err error, render renderer[*T]) {
	if err == nil {
		err = loadWritten(r.Context(), p, []*T{v})
	}
	answerRecord(s, w, r, p, v, err, render, http.StatusCreated)
}

func answerRecord[T any](s *server, w http.ResponseWriter, r *http.Request, p *params, v *T, err error, render renderer[*T], status int) {
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	b := s.newBuilder(s.baseURL(r), p)
	data, err := render(b, r.Context(), []*T{v}, p)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	if status == http.StatusCreated {
		w.Header().Set("Location", data[0].Links.Self)
	}
	b.writeOne(w, r, status, data[0])
}

// serveDeleted answers a delete: 200 with the record deleted (without
// links: it is gone), or err.
func serveDeleted[T any](s *server, w http.ResponseWriter, r *http.Request, v *T, err error, render func(*builder, *T) *Resource) {
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	b := s.newBuilder(s.baseURL(r), nil)
	jsonapi.WriteDocument(w, r, http.StatusOK, b.document(render(b, v), nil, nil))
}

// writeBody reads a write's body, whose attributes it returns; typ is the
// resource type data.type must name. Its error is marked resolve.Malformed:
// the resolver layer answers it after the key's role (a viewer's 403 comes
// first) and before looking the target up; a handler hands it over as the
// command's Invalid, ahead of the attributes' own errors.
func writeBody(r *http.Request, typ string) (jsonapi.Attributes, error) {
	attrs, err := jsonapi.ReadAttributes(r, typ)
	return attrs, resolve.Malformed(err)
}

// firstErr is the first error of errs that is not nil: a write's body
// error before its attributes' errors.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
