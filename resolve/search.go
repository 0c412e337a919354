package resolve

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"shipgraph/model"
)

// Search: GET /v2/search and GraphQL search(query:)
// both call Search. Any key of the account may search; what it finds is
// the account's alone (db.Search filters every table by the account).

// Search answers the account's shipments, containers and tracking
// requests that match query (numbers, reference numbers, tags, names;
// accents and case folded), shipments first, then containers, then
// tracking requests, at most model.SearchLimit. The rules, in order: a
// principal, a query (required; invalid UTF-8, NUL and more than
// model.SearchQueryMaxLength characters are refused), then a query with no
// letter or digit finds nothing.
func (r *Resolver) Search(ctx context.Context, p *model.Principal, query string) ([]*model.SearchResult, error) {
	if p == nil {
		return nil, model.Errorf(model.EUNAUTHENTICATED, "a valid API key is required")
	}
	if err := checkSearchQuery(query); err != nil {
		return nil, err
	}
	return r.DB.Search(ctx, p.AccountID, query, searchLength(query), model.SearchLimit)
}

// checkSearchQuery refuses what PostgreSQL would (22021, 22P05) and
// queries too long to mean anything.
func checkSearchQuery(q string) error {
	switch {
	case strings.TrimSpace(q) == "":
		return model.Errorf(model.EINVALID, "Query parameter is required").AtParameter("query")
	case !utf8.ValidString(q) || strings.ContainsRune(q, 0):
		return model.Errorf(model.EINVALID, "query must be UTF-8 text without NUL characters").AtParameter("query")
	case utf8.RuneCountInString(q) > model.SearchQueryMaxLength:
		return model.Errorf(model.EINVALID, "query is longer than %d characters", model.SearchQueryMaxLength).AtParameter("query")
	}
	return nil
}

// searchLength counts the query's letters and digits: the characters the
// database's tokenizer (shipgraph_fold) keeps. Zero finds nothing; fewer
// than three has no trigram to look up (db.Search).
func searchLength(q string) int {
	n := 0
	for _, c := range q {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			n++
		}
	}
	return n
}
