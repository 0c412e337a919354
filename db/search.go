package db

import (
	"context"
	"strconv"
	"unicode"

	"shipgraph/model"
)

// Search (migrations 00018, 00022): one ranked read over an account's
// shipments, containers and tracking requests. A record matches when its
// searched text (the stored search_doc, from shipgraph_search_doc)
// contains the folded query (trigram index: infix matches of numbers), or
// holds every word of the query as a word prefix (full-text index). The
// query is folded by the same function as the records (shipgraph_fold),
// so accents and case never matter.
//
// Shipments come first, then containers, then tracking requests, 25 at
// most; within a type the records whose number (a shipment's bill of
// lading or reference number) is the query itself first, then the newest
// (created_at, then id, both descending). A tracking request whose number
// is a shipment's bill of lading is left out: the shipment stands for it.
//
// Each type reads its matches one of two ways, and the first decides:
//
//   - the newest: the account's searchWindow newest records, in index
//     order (account_id, created_at, id), filtered by the match, stopping
//     at 25. A word found in one record out of searchWindow/25 or more (a
//     customer's name, a port, a tag) ends here after a few dozen rows;
//     when it finds 25, they are the 25 newest matches of the whole
//     account, since every older record is older than the window.
//   - all: when the window holds fewer than 25, the word is rare and its
//     matches few (fewer than 25 in every searchWindow records): the text
//     indexes (account_id first, migration 00022) find them all, and they
//     are sorted. This is the read of a number, a reference, a rare name.
//
// Either way the exact records are looked up by their own indexes (they
// may be older than the window), and a type is read only while the types
// before it found fewer than 25. The cost is bounded on both sides: a
// window of searchWindow rows, or a sort of fewer than
// 25 × (account's records / searchWindow) matches. A query of six digits
// or more (searchNumberDigits) skips the window: it is a number.

// searchWindow is how many of an account's newest records a search reads
// before it turns to the text indexes (see above): the two reads' worst
// cases meet near sqrt(25 × records), about 4,000 at 660,000 records.
const searchWindow = 4000

// searchType is one type's part of the statement.
type searchType struct {
	alias, table string
	// exact is the condition of a record whose number is the query
	// (served by a *_search_exact_idx of migration 00022).
	exact string
	// also is a further condition of a result ("" none).
	also string
	// kept are the columns the window keeps beside id, created_at and the
	// searched text, for also.
	kept string
}

var searchTypes = [3]searchType{
	{alias: "s", table: "shipments",
		exact: `shipgraph_fold_all(ARRAY[s.bill_of_lading_number] || coalesce(s.ref_numbers, '{}')) @> ARRAY[q.f]`},
	{alias: "c", table: "containers", exact: `shipgraph_fold(c.number) = q.f`},
	{alias: "tr", table: "tracking_requests", exact: `shipgraph_fold(tr.request_number) = q.f`,
		also: `NOT EXISTS (SELECT 1 FROM shipments d WHERE d.account_id = $1
		AND upper(d.bill_of_lading_number) = upper(tr.request_number))`,
		kept: `, tr.request_number`},
}

// searchMatch is the match condition of one table's searched text: q.f is
// the folded query, q.tq its tsquery. A query shorter than three
// characters has no trigram to look up (the index would be read whole):
// only the full-text condition runs then.
func searchMatch(alias string, trigram bool) string {
	fts := alias + `.search_tsv @@ q.tq`
	if !trigram {
		return fts
	}
	return `(` + alias + `.search_doc LIKE q.pat OR ` + fts + `)`
}

// searchWindowMatch is searchMatch over the window's rows, which hold the
// searched text alone (the window is an index-only scan of
// *_search_recent_idx, migration 00022): the tsvector is made from the text
// (search_tsv is to_tsvector('simple', search_doc)), only for the rows
// that hold every word of the query somewhere (q.words, '%word%' each),
// which a match of every word as a prefix implies.
func searchWindowMatch(alias string, trigram bool) string {
	// The query's parts are scalar subqueries (computed once), not a join
	// with q: the window is read in index order and stops at the 25th
	// match, which a join would hide from the planner (it sorted).
	fts := alias + `.search_doc LIKE ALL ((SELECT words FROM q)::text[])
		AND to_tsvector('simple'::regconfig, ` + alias + `.search_doc) @@ (SELECT tq FROM q)`
	if !trigram {
		return `(` + fts + `)`
	}
	// One word: the text holds it (LIKE) exactly when a word of the text
	// starts with it, or holds it inside.
	return `(` + alias + `.search_doc LIKE (SELECT pat FROM q) OR ((SELECT multi FROM q) AND ` + fts + `))`
}

// searchPick is the CTEs of one type, named <alias>_recent (the window's
// matches), <alias>_all (every match, read only when the window found
// fewer than $3) and <alias>_pick (the type's ids, exact first, newest
// next, at most $3).
func searchPick(t searchType, trigram bool, window int) string {
	a := t.alias
	also := ""
	if t.also != "" {
		also = " AND " + t.also
	}
	recent := `SELECT ` + a + `.id, ` + a + `.created_at
	FROM (SELECT ` + a + `.id, ` + a + `.created_at, ` + a + `.search_doc` + t.kept + ` FROM ` + t.table + ` ` + a + `
		WHERE ` + a + `.account_id = $1 ORDER BY ` + a + `.created_at DESC, ` + a + `.id DESC LIMIT ` + strconv.Itoa(window) + `) ` + a + `
	WHERE ` + searchWindowMatch(a, trigram) + also + `
	ORDER BY ` + a + `.created_at DESC, ` + a + `.id DESC LIMIT $3`
	if window == 0 {
		recent = `SELECT NULL::uuid AS id, NULL::timestamptz AS created_at WHERE false`
	}
	return a + `_recent AS MATERIALIZED (
	` + recent + `),
` + a + `_all AS MATERIALIZED (
	SELECT ` + a + `.id, ` + a + `.created_at FROM ` + t.table + ` ` + a + `, q
	WHERE ` + a + `.account_id = $1 AND ` + searchMatch(a, trigram) + also + `
	  AND (SELECT count(*) FROM ` + a + `_recent) < $3),
` + a + `_pick AS MATERIALIZED (
	SELECT m.id, m.created_at, bool_or(m.exact) AS exact FROM (
		SELECT r.id, r.created_at, false AS exact FROM ` + a + `_recent r WHERE (SELECT count(*) FROM ` + a + `_recent) >= $3
		UNION ALL
		(SELECT r.id, r.created_at, false FROM ` + a + `_all r ORDER BY r.created_at DESC, r.id DESC LIMIT $3)
		UNION ALL
		SELECT ` + a + `.id, ` + a + `.created_at, true FROM ` + t.table + ` ` + a + `, q
		WHERE ` + a + `.account_id = $1 AND ` + t.exact + also + `
	) m GROUP BY m.id, m.created_at
	ORDER BY exact DESC, m.created_at DESC, m.id DESC LIMIT $3)`
}

var (
	searchWithTrigrams = searchStatement(true, searchWindow)
	searchWordsOnly    = searchStatement(false, searchWindow)
	searchNumber       = searchStatement(true, 0)
)

// searchNumberDigits is how many digits make a query a number: a run of
// six digits is in about one searched text in 30,000 (a few dozen records
// of a million), so its matches are few and the text indexes answer at
// once; the window would only cost. The answer is the same either way.
const searchNumberDigits = 6

func searchStatement(trigram bool, window int) string {
	return `WITH q AS MATERIALIZED (SELECT f, '%' || f || '%' AS pat, shipgraph_tsquery($2::text) AS tq,
	w.words, cardinality(w.words) > 1 AS multi
	FROM shipgraph_fold($2::text) AS f,
	LATERAL (SELECT ARRAY(SELECT '%' || x || '%' FROM unnest(string_to_array(f, ' ')) AS x WHERE x <> '') AS words) w),
` + searchPick(searchTypes[0], trigram, window) + `,
` + searchPick(searchTypes[1], trigram, window) + `,
` + searchPick(searchTypes[2], trigram, window) + `
SELECT r.* FROM (
(SELECT s.id, 'shipment' AS entity_type, s.bill_of_lading_number AS number, NULL::uuid AS shipment_id,
	s.shipping_line_scac AS scac, s.port_of_lading_name, s.port_of_discharge_name,
	(SELECT count(*) FROM containers c WHERE c.account_id = $1 AND c.account_id = s.account_id AND c.shipment_id = s.id)::int AS containers_count,
	s.line_tracking_stopped_at IS NOT NULL AS tracking_stopped, s.line_tracking_stopped_reason AS tracking_stopped_reason,
	NULL::text AS status, NULL::text AS failed_reason, coalesce(s.ref_numbers, '{}') AS ref_numbers, s.created_at, s.updated_at,
	1 AS kind, p.exact
FROM s_pick p JOIN shipments s ON s.account_id = $1 AND s.id = p.id)
UNION ALL
(SELECT c.id, 'cargo', c.number, c.shipment_id, sh.shipping_line_scac, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	c.ref_numbers, c.created_at, c.updated_at, 2, p.exact
FROM c_pick p JOIN containers c ON c.account_id = $1 AND c.id = p.id
JOIN shipments sh ON sh.account_id = c.account_id AND sh.id = c.shipment_id
WHERE (SELECT count(*) FROM s_pick) < $3)
UNION ALL
(SELECT tr.id, 'tracking_request', tr.request_number, tr.shipment_id, tr.scac, NULL, NULL, NULL, NULL, NULL,
	tr.status, tr.failed_reason, tr.ref_numbers, tr.created_at, tr.updated_at, 3, p.exact
FROM tr_pick p JOIN tracking_requests tr ON tr.account_id = $1 AND tr.id = p.id
WHERE (SELECT count(*) FROM s_pick) < $3 AND (SELECT count(*) FROM s_pick) + (SELECT count(*) FROM c_pick) < $3)
) r
ORDER BY r.kind, r.exact DESC, r.created_at DESC, r.id DESC
LIMIT $3`
}

type searchRow struct {
	model.SearchResult
	Kind  int  `db:"kind"`
	Exact bool `db:"exact"`
}

// Search reads the account's records that match query (see above), at
// most limit. folded is the length of the query's letters and digits (the
// caller's count, which picks the statement): 0 answers nothing unread.
func (db *DB) Search(ctx context.Context, accountID, query string, folded, limit int) ([]*model.SearchResult, error) {
	out := []*model.SearchResult{}
	if !validUUID(accountID) || folded == 0 || limit <= 0 {
		return out, nil
	}
	st := searchWordsOnly
	if folded >= 3 {
		st = searchWithTrigrams
	}
	if db.searchWindow > 0 && db.searchWindow != searchWindow {
		st = searchStatement(folded >= 3, db.searchWindow)
	}
	if digits(query) >= searchNumberDigits {
		st = searchNumber
	}
	rows, err := selectAll[searchRow](ctx, db.read(accountID), st, accountID, query, limit)
	if err != nil {
		return nil, mapErr(err)
	}
	for _, r := range rows {
		res := r.SearchResult
		if res.RefNumbers == nil {
			res.RefNumbers = []string{}
		}
		out = append(out, &res)
	}
	return out, nil
}

// digits counts the query's digits.
func digits(q string) int {
	n := 0
	for _, c := range q {
		if unicode.IsDigit(c) {
			n++
		}
	}
	return n
}
