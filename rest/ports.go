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

type portAttributes struct {
	Name        string   `json:"name"`
	Code        string   `json:"code"`
	StateAbbr   *string  `json:"state_abbr"`
	City        *string  `json:"city"`
	CountryCode string   `json:"country_code"`
	TimeZone    string   `json:"time_zone"`
	Latitude    *float64 `json:"latitude"`
	Longitude   *float64 `json:"longitude"`
}

func (b *builder) portResource(p *model.Port) *Resource {
	return &Resource{
		ID:   p.ID,
		Type: "port",
		Attributes: portAttributes{
			Name:        p.Name,
			Code:        p.Code,
			StateAbbr:   p.StateAbbr,
			City:        p.City,
			CountryCode: p.CountryCode,
			TimeZone:    p.TimeZone,
			Latitude:    p.Latitude,
			Longitude:   p.Longitude,
		},
		Links: &Links{Self: b.base + "/v2/ports/" + p.ID},
	}
}

type metroAreaAttributes struct {
	Name        string   `json:"name"`
	Code        string   `json:"code"`
	StateAbbr   *string  `json:"state_abbr"`
	CountryCode string   `json:"country_code"`
	TimeZone    string   `json:"time_zone"`
	Latitude    *float64 `json:"latitude"`
	Longitude   *float64 `json:"longitude"`
}

// metroAreaResource renders a metro area (a shipment's destination, or
// GET /v2/metro_areas/{id}).
func (b *builder) metroAreaResource(m *model.MetroArea) *Resource {
	return &Resource{
		ID:   m.ID,
		Type: "metro_area",
		Attributes: metroAreaAttributes{
			Name:        m.Name,
			Code:        m.Code,
			StateAbbr:   m.StateAbbr,
			CountryCode: m.CountryCode,
			TimeZone:    m.TimeZone,
			Latitude:    m.Latitude,
			Longitude:   m.Longitude,
		},
		Links: &Links{Self: b.base + "/v2/metro_areas/" + m.ID},
	}
}
