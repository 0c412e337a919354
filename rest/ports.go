package rest

import (
	"net/http"

	"shipgraph/model"
)

// GET /v2/ports/{id}, and the port and metro area resources included by
// shipments and terminals.

var portItem = endpoint{serializer: "V2::PortSerializer"}

func (s *server) getPort(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, portItem, (s.res.Port), plain((*builder).portResource))
}

func (b *builder) portResource(p *model.Port) *Resource {
	return &Resource{
		ID:         p.ID,
		Type:       "port",
		Attributes: portAttributesOf(p),
		Links:      &Links{Self: b.base + "/v2/ports/" + p.ID},
	}
}

// metroAreaResource renders a metro area (a shipment's destination, or
// GET /v2/metro_areas/{id}).
func (b *builder) metroAreaResource(m *model.MetroArea) *Resource {
	return &Resource{
		ID:         m.ID,
		Type:       "metro_area",
		Attributes: metroAreaAttributesOf(m),
		Links:      &Links{Self: b.base + "/v2/metro_areas/" + m.ID},
	}
}
