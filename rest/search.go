package rest

import (
	"net/http"

	"shipgraph/model"
	"shipgraph/rest/jsonapi"
)

// GET /v2/search (the OpenAPI's searchAll): one ranked
// search over the account's shipments, containers ("cargo") and tracking
// requests, answered in the OpenAPI's shape: {"data": [{id, type,
// attributes}]}, application/json, no links or meta. resolve.Search holds
// the rules; the query parameter is required (400 without it).

var searchEndpoint = endpoint{Serializer: "V2::SearchSerializer", Filters: []string{"query"}}

type searchResource struct {
	ID         string           `json:"id"`
	Type       string           `json:"type"`
	Attributes searchAttributes `json:"attributes"`
}

func (s *server) search(w http.ResponseWriter, r *http.Request) {
	p, err := parseParams(r, searchEndpoint)
	var found []*model.SearchResult
	if err == nil {
		found, err = s.res.Search(r.Context(), who(r), p.Filter("query"))
	}
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	data := make([]searchResource, len(found))
	for i, x := range found {
		data[i] = searchResource{ID: x.ID, Type: x.EntityType, Attributes: searchAttributesOf(x)}
	}
	writeJSON(w, http.StatusOK, struct {
		Data []searchResource `json:"data"`
	}{data})
}
