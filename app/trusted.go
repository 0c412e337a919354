package app

import (
	"errors"
	"log/slog"

	"shipgraph/config"
	"shipgraph/graph/gqlhttp"
)

// trustedDocuments loads GRAPHQL_TRUSTED_DOCUMENTS (nil when unset) with
// how it is enforced. GRAPHQL_TRUSTED_ONLY without a manifest would refuse
// every operation: it is a configuration error, not a server that answers
// nothing.
func trustedDocuments(v *config.Values, log *slog.Logger) (*gqlhttp.TrustedDocuments, error) {
	path := v.String(config.GraphQLTrustedDocuments)
	if path == "" {
		if v.Bool(config.GraphQLTrustedOnly) {
			return nil, errors.New("GRAPHQL_TRUSTED_ONLY needs a manifest in GRAPHQL_TRUSTED_DOCUMENTS")
		}
		return nil, nil
	}
	t, err := gqlhttp.LoadTrustedDocuments(path)
	if err != nil {
		return nil, err
	}
	t.Only, t.ExemptAdmin = v.Bool(config.GraphQLTrustedOnly), v.Bool(config.GraphQLTrustedExemptAdmin)
	log.Info("trusted documents loaded", "path", path, "operations", t.Len(), "only", t.Only, "exempt_admin", t.ExemptAdmin)
	return t, nil
}
