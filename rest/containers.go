package rest

import (
	"context"
	"net/http"
	"strconv"

	"shipgraph/catalog"
	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// GET /v2/containers and GET /v2/containers/{id}.

// containerIncludes are the relationships of the container resource.
// transport_events and raw_events are relationships of the spec whose
// records Shipgraph does not hold: they are accepted, their linkage is
// always [] and they add nothing to included.
var containerIncludes = includes(catalog.Container)

var (
	containerList = endpoint{
		Serializer: "V2::ContainerSerializer",
		Includes:   containerIncludes,
		// Not in the OpenAPI document, but the resolvers order by these.
		Sorts: []string{"created_at", "pickup_lfd", "number"},
		// filter[number] is the lookup the shipments list's "number"
		// parameter refers clients to.
		Filters: []string{"filter[number]"},
		Paged:   true,
		Cursors: true,
	}
	containerItem = endpoint{Serializer: "V2::ContainerSerializer", Includes: containerIncludes}
)

func (s *server) listContainers(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, containerList, func(ctx context.Context, p *params) (listPage[*model.Container], error) {
		filter := model.ContainerFilter{Number: p.Filter("filter[number]")}
		pg, err := s.res.Containers(ctx, who(r), resolve.ContainerQuery{Filter: filter, Order: p.Order(), Page: p.pageArgs(), Plan: p.plan})
		if err != nil {
			return listPage[*model.Container]{}, p.CursorError(err)
		}
		return fromPage(pg, func(ctx context.Context) (int, error) { return s.res.CountContainers(ctx, who(r), filter) }), nil
	}, withIncludes)
}

func (s *server) getContainer(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, containerItem, (s.res.Container), withIncludes)
}

// PATCH /v2/containers/{id}: a container's ref_numbers (the OpenAPI
// document prints the operation, patch-containers-id, on the list path;
// the id is the container's). 200 with the container, include as GET.

func (s *server) updateContainer(w http.ResponseWriter, r *http.Request) {
	p, err := parseParams(r, containerItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, bad := writeBody(r, "container")
	// An attribute error is answered once the container is found (404
	// first), as the resolver layer orders it.
	c := resolve.UpdateContainer{ID: r.PathValue("id"), Invalid: firstErr(bad, attrs.Only("%s cannot be changed; a container's editable attribute is ref_numbers", "ref_numbers"))}
	if c.Invalid == nil {
		c.RefNumbers, c.Invalid = attrs.OptionalList("ref_numbers")
	}
	v, err := s.res.UpdateContainer(r.Context(), who(r), c)
	serveWritten(s, w, r, p, v, err, withIncludes)
}

// refreshContainer answers PATCH /v2/containers/{id}/refresh: the
// container's shipment is polled at its shipping line at once. Over the
// refresh limit (10 a minute per API key by default) it answers 429 with
// Retry-After.
func (s *server) refreshContainer(w http.ResponseWriter, r *http.Request) {
	wait, err := s.res.RefreshContainer(r.Context(), who(r), r.PathValue("id"))
	if err != nil {
		if wait > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		}
		jsonapi.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"message":"Started refresh for Shipping line"}` + "\n"))
}
