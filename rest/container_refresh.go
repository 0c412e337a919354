package rest

import (
	"net/http"
	"strconv"

	"shipgraph/rest/jsonapi"
)

// refreshContainer answers PATCH /v2/containers/{id}/refresh: the
// container's shipment is polled at its shipping line at once. Over the
// refresh limit (10 a minute per API key by default) it answers 429 with
// Retry-After.
func (s *server) refreshContainer(w http.ResponseWriter, r *http.Request) {
	wait, err := s.res.RefreshContainer(r.Context(), who(r), r.PathValue("id"))
	if err != nil {
		if wait > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds())+1))
		}
		jsonapi.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"message":"Started refresh for Shipping line"}` + "\n"))
}
