package rest

import (
	"net/http"
)

// GET /v2/ports/{id}, and the port and metro area resources included by
// shipments and terminals.

var portItem = endpoint{Serializer: "V2::PortSerializer"}

func (s *server) getPort(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, portItem, (s.res.Port), plain(portResource))
}
