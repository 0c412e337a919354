package rest

import (
	"net/http"

	"shipgraph/catalog"
)

// GET /v2/terminals/{id}, and the terminal and rail terminal resources
// included by shipments and containers.

var terminalItem = endpoint{Serializer: "V2::TerminalSerializer", Includes: includes(catalog.Terminal)}

func (s *server) getTerminal(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, terminalItem, (s.res.Terminal), withIncludes)
}
