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
