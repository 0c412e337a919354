package gqlhttp

import (
	"net/http"

	"shipgraph/model"
)

// WriteRequestError answers a GraphQL request that was refused before it
// reached the GraphQL handler — by the rate limit, by a failure of the
// store during authentication, by a panic — in the shape of a GraphQL
// response: {"errors":[{"message":…,"extensions":{"code":…}}]} with the
// code the error presenter gives err's application code, in the media type
// the client accepts (application/json when it accepts neither), with the
// HTTP status given. Internal errors get a generic message, as from the
// presenter; log them before.
func WriteRequestError(w http.ResponseWriter, r *http.Request, status int, err error) {
	media := negotiate(r.Header.Get("Accept"))
	if media == "" {
		media = mediaJSON
	}
	code := gqlCodes[model.ErrorCode(err)]
	msg := model.ErrorMessage(err)
	if code == "" || code == gqlCodes[model.EINTERNAL] {
		code, msg = gqlCodes[model.EINTERNAL], "internal server error"
	}
	writeGraphQLError(w, media, status, code, msg)
}
