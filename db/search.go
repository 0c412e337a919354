package db

import (
	"context"

	"shipgraph/model"
)

// Search (migration 00018): one ranked read over an account's shipments,
// containers and tracking requests. A record matches when its searched text
// (the stored search_doc, from shipgraph_search_doc) contains
// the folded query (trigram index: infix matches of numbers), or holds
// every word of the query as a word prefix (full-text index). The query is
// folded by the same function as the records (shipgraph_fold), so accents
// and case never matter.
//
// Each type is read by a branch of its own, LIMIT 25 each, then shipments
// come first, then containers, then tracking requests; within a type an
// exact number (or reference number) first, then the most recently
// updated. A tracking request whose number is a shipment's bill of lading
// is left out: the shipment stands for it.

// searchMatch is the match condition of one table's searched text doc: $2
// is the folded query, $3 its tsquery. A query shorter than three
// characters has no trigram to look up (the index would be read whole):
// only the full-text branch runs then.
func searchMatch(alias string, trigram bool) string {
	fts := alias + `.search_tsv @@ q.tq`
	if !trigram {
		return fts
	}
	return `(` + alias + `.search_doc LIKE '%' || q.f || '%' OR ` + fts + `)`
}

func searchStatement(trigram bool) string {
	return `WITH q AS MATERIALIZED (SELECT shipgraph_fold($2::text) AS f, shipgraph_tsquery($2::text) AS tq)
(SELECT s.id, 'shipment' AS entity_type, s.bill_of_lading_number AS number, NULL::uuid AS shipment_id,
	s.shipping_line_scac AS scac, s.port_of_lading_name, s.port_of_discharge_name,
	(SELECT count(*) FROM containers c WHERE c.account_id = s.account_id AND c.shipment_id = s.id)::int AS containers_count,
	s.line_tracking_stopped_at IS NOT NULL AS tracking_stopped, s.line_tracking_stopped_reason AS tracking_stopped_reason,
	NULL::text AS status, NULL::text AS failed_reason, coalesce(s.ref_numbers, '{}') AS ref_numbers, s.created_at, s.updated_at,
	1 AS kind, (shipgraph_fold(s.bill_of_lading_number) = q.f
		OR EXISTS (SELECT 1 FROM unnest(s.ref_numbers) r WHERE shipgraph_fold(r) = q.f)) AS exact
FROM shipments s, q
WHERE s.account_id = $1 AND ` + searchMatch("s", trigram) + `
ORDER BY exact DESC, s.updated_at DESC, s.id LIMIT $3)
UNION ALL
(SELECT c.id, 'cargo', c.number, c.shipment_id, sh.shipping_line_scac, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
	c.ref_numbers, c.created_at, c.updated_at, 2, shipgraph_fold(c.number) = q.f
FROM containers c JOIN shipments sh ON sh.account_id = c.account_id AND sh.id = c.shipment_id, q
WHERE c.account_id = $1 AND ` + searchMatch("c", trigram) + `
ORDER BY 17 DESC, c.updated_at DESC, c.id LIMIT $3)
UNION ALL
(SELECT tr.id, 'tracking_request', tr.request_number, tr.shipment_id, tr.scac, NULL, NULL, NULL, NULL, NULL,
	tr.status, tr.failed_reason, tr.ref_numbers, tr.created_at, tr.updated_at, 3, shipgraph_fold(tr.request_number) = q.f
FROM tracking_requests tr, q
WHERE tr.account_id = $1 AND ` + searchMatch("tr", trigram) + `
	AND NOT EXISTS (SELECT 1 FROM shipments d WHERE d.account_id = tr.account_id
		AND upper(d.bill_of_lading_number) = upper(tr.request_number))
ORDER BY 17 DESC, tr.updated_at DESC, tr.id LIMIT $3)
ORDER BY kind, exact DESC, updated_at DESC, id
LIMIT $3`
}

var (
	searchWithTrigrams = searchStatement(true)
	searchWordsOnly    = searchStatement(false)
)

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
