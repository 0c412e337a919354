package rest

import (
	"context"
	"net/http"

	"shipgraph/catalog"
	"shipgraph/model"
	"shipgraph/resolve"
)

// Reference data, shared by every account:
//
//	GET /v2/shipping_lines        by SCAC, paged like every list
//	GET /v2/shipping_lines/{id}   the id or the SCAC
//	GET /v2/metro_areas/{id}

var (
	shippingLineList = endpoint{Serializer: "V2::ShippingLineSerializer", Paged: true}
	shippingLineItem = endpoint{Serializer: "V2::ShippingLineSerializer"}
	metroAreaItem    = endpoint{Serializer: "V2::MetroAreaSerializer"}
)

func (s *server) listShippingLines(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, shippingLineList, func(ctx context.Context, p *params) (listPage[*model.ShippingLine], error) {
		pg, err := s.res.ShippingLines(ctx, who(r), resolve.ShippingLineQuery{Page: resolve.PageArgs{Page: &p.Page}, Plan: p.plan})
		if err != nil {
			return listPage[*model.ShippingLine]{}, err
		}
		return fromPage(pg, func(ctx context.Context) (int, error) { return s.res.CountShippingLines(ctx, who(r)) }), nil
	}, plain(shippingLineResource))
}

func (s *server) getShippingLine(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, shippingLineItem, func(ctx context.Context, p *model.Principal, id string, _ *resolve.Plan) (*model.ShippingLine, error) {
		return s.res.ShippingLine(ctx, p, id)
	}, plain(shippingLineResource))
}

func (s *server) getMetroArea(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, metroAreaItem, (s.res.MetroArea), plain(metroAreaResource))
}

// GET /v2/ports/{id}, and the port and metro area resources included by
// shipments and terminals.

var portItem = endpoint{Serializer: "V2::PortSerializer"}

func (s *server) getPort(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, portItem, (s.res.Port), plain(portResource))
}

// GET /v2/terminals/{id}, and the terminal and rail terminal resources
// included by shipments and containers.

var terminalItem = endpoint{Serializer: "V2::TerminalSerializer", Includes: includes(catalog.Terminal)}

func (s *server) getTerminal(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, terminalItem, (s.res.Terminal), withIncludes)
}
