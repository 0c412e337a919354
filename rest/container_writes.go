package rest

import (
	"net/http"

	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// PATCH /v2/containers/{id}: a container's ref_numbers (the OpenAPI
// document prints the operation, patch-containers-id, on the list path;
// the id is the container's). 200 with the container, include as GET.

func (s *server) updateContainer(w http.ResponseWriter, r *http.Request) {
	p, err := parseParams(r, containerItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, bad := writeBody(r, "container")
	// An attribute error is answered once the container is found (404
	// first), as the resolver layer orders it.
	c := resolve.UpdateContainer{ID: r.PathValue("id"), Invalid: firstErr(bad, attrs.Only("%s cannot be changed; a container's editable attribute is ref_numbers", "ref_numbers"))}
	if c.Invalid == nil {
		c.RefNumbers, c.Invalid = attrs.OptionalList("ref_numbers")
	}
	v, err := s.res.UpdateContainer(r.Context(), who(r), c)
	serveWritten(s, w, r, p, v, err, withIncludes)
}
