package rest

import (
	"context"
	"net/http"

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
