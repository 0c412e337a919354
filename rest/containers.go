package rest

import (
	"context"
	"net/http"

	"shipgraph/catalog"
	"shipgraph/model"
	"shipgraph/resolve"
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
