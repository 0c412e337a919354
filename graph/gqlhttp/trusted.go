package gqlhttp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator/rules"

	"shipgraph/graph/executor"
	"shipgraph/model"
)

// Trusted documents (GRAPHQL_TRUSTED_DOCUMENTS): operations known ahead of
// time, by id, from the manifest a client's build writes. Clients send an
// operation by its id in Apollo's persisted-query extension
// (extensions.persistedQuery.sha256Hash, over POST or GET) and the body
// comes from the manifest. With Only (GRAPHQL_TRUSTED_ONLY) nothing else
// runs: an unknown id is PERSISTED_QUERY_NOT_IN_LIST, a document sent as
// text that is not one of the manifest's bodies is QUERY_NOT_IN_SAFELIST
// (Apollo Router's codes, which Apollo's clients know); admin keys may be
// exempt (ExemptAdmin). Without Only the manifest only serves ids, and
// everything else runs as before (automatic persisted queries included).
//
// It runs first among the operation parameter mutators, before APQ, for
// every transport (POST, GET, multipart, SSE, WebSockets).

// Codes of the refusals.
const (
	CodeNotInList     = "PERSISTED_QUERY_NOT_IN_LIST"
	CodeNotInSafelist = "QUERY_NOT_IN_SAFELIST"
)

// TrustedDocuments is a loaded manifest and how it is enforced.
type TrustedDocuments struct {
	byID   map[string]string   // id → body
	bodies map[string]struct{} // the bodies, for documents sent as text
	// Only refuses every operation that is not in the manifest.
	Only bool
	// ExemptAdmin lets admin keys run any operation when Only is set.
	ExemptAdmin bool
}

// Add trusts the operations of bodies besides the manifest's, by their
// text and by their sha256 id: those the server runs for itself (the MCP
// server's tools), which GRAPHQL_TRUSTED_ONLY must not refuse.
func (t *TrustedDocuments) Add(bodies ...string) {
	if t.byID == nil {
		t.byID = map[string]string{}
	}
	if t.bodies == nil {
		t.bodies = map[string]struct{}{}
	}
	for _, body := range bodies {
		sum := sha256.Sum256([]byte(body))
		t.byID[hex.EncodeToString(sum[:])] = body
		t.bodies[body] = struct{}{}
	}
}

// Len is the number of operations of the manifest.
func (t *TrustedDocuments) Len() int { return len(t.byID) }

// apolloManifest is what @apollo/generate-persisted-query-manifest writes.
type apolloManifest struct {
	Format     string `json:"format"`
	Version    int    `json:"version"`
	Operations []struct {
		ID   string `json:"id"`
		Body string `json:"body"`
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"operations"`
}

// LoadTrustedDocuments reads the manifest at path: Apollo's persisted query
// manifest ({"format":"apollo-persisted-query-manifest","version":1,
// "operations":[{"id","body",…}]}) or GraphQL Codegen's persisted
// documents ({"<hash>": "<document>", …}). Every operation must parse and
// validate against the schema, so a manifest built for another version of
// the schema fails at start, not at the first request that uses it.
func LoadTrustedDocuments(path string) (*TrustedDocuments, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("GRAPHQL_TRUSTED_DOCUMENTS: %w", err)
	}
	t, err := ParseTrustedDocuments(b)
	if err != nil {
		return nil, fmt.Errorf("GRAPHQL_TRUSTED_DOCUMENTS %s: %w", path, err)
	}
	return t, nil
}

// ParseTrustedDocuments is LoadTrustedDocuments on the manifest's bytes.
func ParseTrustedDocuments(b []byte) (*TrustedDocuments, error) {
	t := &TrustedDocuments{byID: map[string]string{}, bodies: map[string]struct{}{}}
	add := func(id, body string) error {
		if id == "" || strings.TrimSpace(body) == "" {
			return fmt.Errorf("an operation without id or body (id %q)", id)
		}
		if prev, ok := t.byID[id]; ok && prev != body {
			return fmt.Errorf("id %s names two different documents", id)
		}
		t.byID[id] = body
		t.bodies[body] = struct{}{}
		return nil
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, errors.New("not a JSON object")
	}
	if _, ok := probe["format"]; ok {
		var m apolloManifest
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("not an Apollo persisted query manifest: %w", err)
		}
		if m.Format != "apollo-persisted-query-manifest" || m.Version != 1 {
			return nil, fmt.Errorf("format %q version %d: want apollo-persisted-query-manifest version 1", m.Format, m.Version)
		}
		for _, op := range m.Operations {
			if err := add(op.ID, op.Body); err != nil {
				return nil, err
			}
		}
	} else {
		for id, raw := range probe {
			var body string
			if err := json.Unmarshal(raw, &body); err != nil {
				return nil, fmt.Errorf("%s: a persisted documents map holds strings (GraphQL Codegen's format)", id)
			}
			if err := add(id, body); err != nil {
				return nil, err
			}
		}
	}
	if len(t.byID) == 0 {
		return nil, errors.New("no operations")
	}
	schema := executor.NewExecutableSchema(executor.Config{}).Schema()
	for id, body := range t.byID {
		if _, errs := gqlparser.LoadQueryWithRules(schema, body, rules.NewDefaultRules()); len(errs) > 0 {
			return nil, fmt.Errorf("operation %s does not validate against the schema: %s", id, errs[0].Message)
		}
	}
	return t, nil
}

var _ interface {
	graphql.OperationParameterMutator
	graphql.HandlerExtension
} = (*TrustedDocuments)(nil)

func (*TrustedDocuments) ExtensionName() string                   { return "TrustedDocuments" }
func (*TrustedDocuments) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationParameters puts the manifest's body in place of a known
// id, and refuses what the manifest does not hold when Only is set.
func (t *TrustedDocuments) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	enforce := t.Only && !(t.ExemptAdmin && isAdmin(ctx))
	id, sent := persistedID(p.Extensions)
	if sent {
		body, known := t.byID[id]
		switch {
		case known && p.Query == "":
			p.Query = body
			if !isSHA256Of(id, body) {
				// A Codegen id (sha1, or a hash of its own): APQ
				// would take it for a wrong sha256. The manifest
				// answered for it.
				delete(p.Extensions, "persistedQuery")
			}
			return nil
		case enforce && p.Query == "":
			return refusal(CodeNotInList, "this server runs trusted documents only, and none has the id %s", id)
		}
	}
	if !enforce {
		return nil
	}
	if _, ok := t.bodies[p.Query]; !ok {
		return refusal(CodeNotInSafelist, "this server runs trusted documents only: send the id of one of its operations (extensions.persistedQuery.sha256Hash), not a document")
	}
	if sent && !isSHA256Of(id, p.Query) {
		delete(p.Extensions, "persistedQuery") // trusted by its text
	}
	return nil
}

// persistedID is the id of Apollo's persisted-query extension, when sent.
func persistedID(ext map[string]any) (string, bool) {
	pq, ok := ext["persistedQuery"].(map[string]any)
	if !ok {
		return "", false
	}
	id, ok := pq["sha256Hash"].(string)
	return id, ok && id != ""
}

func isSHA256Of(id, body string) bool {
	sum := sha256.Sum256([]byte(body))
	var hexSum [64]byte
	hex.Encode(hexSum[:], sum[:])
	return bytes.Equal(hexSum[:], []byte(id))
}

func isAdmin(ctx context.Context) bool {
	p := model.PrincipalFrom(ctx)
	return p != nil && p.Role == model.RoleAdmin
}

func refusal(code, format string, args ...any) *gqlerror.Error {
	err := gqlerror.Errorf(format, args...)
	err.Extensions = map[string]any{"code": code}
	return err
}
