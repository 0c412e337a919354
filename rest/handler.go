// Package rest is the /v2 JSON:API adapter: it parses and validates a
// request, calls the graph resolvers (the same rules, loaders and SQL as
// GraphQL) and renders the JSON:API document. It never imports db/.
package rest

import (
	"net/http"

	"shipgraph/graph"
	"shipgraph/graph/model"
)

// MediaType is the JSON:API media type of every response.
const MediaType = "application/vnd.api+json"

// Config holds what the adapter needs besides the resolvers.
type Config struct {
	// PublicBaseURL is the scheme and host for absolute links
	// (e.g. https://api.example.com); empty means taken from the request.
	PublicBaseURL string
}

// NewHandler returns the /v2 router.
func NewHandler(r *graph.Resolver, cfg Config) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v2/", func(w http.ResponseWriter, req *http.Request) {
		WriteError(w, req, model.Errorf(model.ENOTFOUND, "no such endpoint"))
	})
	return RequireKey(mux)
}

// RequireKey answers the JSON:API 401 when the request carries no valid key.
func RequireKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if model.PrincipalFrom(r.Context()) == nil {
			WriteError(w, r, model.Errorf(model.EUNAUTHENTICATED, "a valid API key is required: send the header 'Authorization: Token <key>'"))
			return
		}
		next.ServeHTTP(w, r)
	})
}
