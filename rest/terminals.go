package rest

import (
	"context"
	"net/http"

	"shipgraph/catalog"
	"shipgraph/model"
)

// GET /v2/terminals/{id}, and the terminal and rail terminal resources
// included by shipments and containers.

var terminalItem = endpoint{serializer: "V2::TerminalSerializer", includes: includes(catalog.Terminal)}

func (s *server) getTerminal(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, terminalItem, (s.res.Terminal), (*builder).terminals)
}

// terminals renders terminals and, when asked for, their ports.
func (b *builder) terminals(ctx context.Context, ts []*model.Terminal, p *params) ([]*Resource, error) {
	return renderAll(b, ctx, ts, p, terminalShape)
}

// Terminal and rail terminal attributes other than name are optional and
// typed plain (non-nullable) strings by the OpenAPI document: one the data
// lacks is omitted, never null, so clients generated from the document
// accept the response.
type terminalAttributes struct {
	Name            string  `json:"name"`
	Nickname        *string `json:"nickname,omitempty"`
	FirmsCode       *string `json:"firms_code,omitempty"`
	SmdgCode        *string `json:"smdg_code,omitempty"`
	BicFacilityCode *string `json:"bic_facility_code,omitempty"`
	Street          *string `json:"street,omitempty"`
	City            *string `json:"city,omitempty"`
	State           *string `json:"state,omitempty"`
	StateAbbr       *string `json:"state_abbr,omitempty"`
	Zip             *string `json:"zip,omitempty"`
	Country         *string `json:"country,omitempty"`
}

func (b *builder) terminalResource(t *model.Terminal) *Resource {
	return &Resource{
		ID:   t.ID,
		Type: "terminal",
		Attributes: terminalAttributes{
			Name:            t.Name,
			Nickname:        t.Nickname,
			FirmsCode:       t.FirmsCode,
			SmdgCode:        t.SmdgCode,
			BicFacilityCode: t.BicFacilityCode,
			Street:          t.Street,
			City:            t.City,
			State:           t.State,
			StateAbbr:       t.StateAbbr,
			Zip:             t.Zip,
			Country:         t.Country,
		},
		Relationships: b.linkage(t, terminalShape.members),
		Links:         &Links{Self: b.base + "/v2/terminals/" + t.ID},
	}
}

type railTerminalAttributes struct {
	Name      string  `json:"name"`
	Nickname  *string `json:"nickname,omitempty"`
	FirmsCode *string `json:"firms_code,omitempty"`
}

// railTerminalResource renders a rail terminal (a shipment's destination
// terminal); /v2 has no rail terminal endpoint, so it has no self link.
func (b *builder) railTerminalResource(t *model.RailTerminal) *Resource {
	return &Resource{
		ID:            t.ID,
		Type:          "rail_terminal",
		Attributes:    railTerminalAttributes{Name: t.Name, Nickname: t.Nickname, FirmsCode: t.FirmsCode},
		Relationships: b.linkage(t, railTerminalShape.members),
	}
}
