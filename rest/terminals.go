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

func (b *builder) terminalResource(t *model.Terminal) *Resource {
	return &Resource{
		ID:            t.ID,
		Type:          "terminal",
		Attributes:    terminalAttributesOf(t),
		Relationships: b.linkage(t, terminalShape.members),
		Links:         &Links{Self: b.base + "/v2/terminals/" + t.ID},
	}
}

// railTerminalResource renders a rail terminal (a shipment's destination
// terminal); /v2 has no rail terminal endpoint, so it has no self link.
func (b *builder) railTerminalResource(t *model.RailTerminal) *Resource {
	return &Resource{
		ID:            t.ID,
		Type:          "rail_terminal",
		Attributes:    railTerminalAttributesOf(t),
		Relationships: b.linkage(t, railTerminalShape.members),
	}
}
