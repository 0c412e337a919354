package db_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/lib/pq"

	"shipgraph/model"
)

// TestFileNameTokenizer: the file-name filter splits and folds like search
// (shipgraph_fold): accents and case do not matter, an apostrophe or a
// typographic one splits words like any other mark, letters outside ASCII
// are kept, and a filter with no letter or digit matches nothing.
func TestFileNameTokenizer(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	add := func(name string) string {
		return f.id(t, `INSERT INTO documents (account_id, name, document_type, source, file_name)
			VALUES ($1, $2, 'other', 'upload', $2) RETURNING id`, f.A.Account, name)
	}
	muller := add("Müller Rechnung.pdf")
	obrien := add("O’Brien's manifest.PDF")
	cyrillic := add("Накладная_2026.pdf")
	for _, c := range []struct {
		filter string
		want   []string
	}{
		{"muller", []string{muller}},
		{"MÜLLER rech", []string{muller}},
		{"ü", nil},
		{"o'brien", []string{obrien}},
		{"O’BRIEN manif", []string{obrien}},
		{"накладная", []string{cyrillic}},
		{"НАКЛ 2026", []string{cyrillic}},
		{"– ’ '", nil},
	} {
		p, err := f.DB.ListDocuments(ctx, f.A.Account, model.DocumentFilter{Filename: c.filter}, all100)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range p.Items {
			if d.ID == muller || d.ID == obrien || d.ID == cyrillic {
				got = append(got, d.ID)
			}
		}
		if len(got) != len(c.want) || (len(got) == 1 && got[0] != c.want[0]) {
			t.Errorf("filter %q: %v, want %v", c.filter, got, c.want)
		}
	}
	// A filter without words matches nothing at all (it matched every
	// document before migration 00018).
	p, err := f.DB.ListDocuments(ctx, f.A.Account, model.DocumentFilter{Filename: "--"}, all100)
	if err != nil || len(p.Items) != 0 {
		t.Errorf("filter \"--\": %d documents (%v), want none", len(p.Items), err)
	}
}

// TestSearchWaysAgree: a search answers the same records in the same order
// whichever way each type is read (db/search.go): the newest records first
// (a word in many records) or every match through the text indexes (a rare
// one), with the exact records first even when they are older than the
// window. Each query is compared with every match read by brute force and
// sorted, for windows from smaller than the page to larger than the account.
func TestSearchWaysAgree(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	acct := f.A.Account
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	customers := []string{"Tyrell Textiles", "Wonka Confections", "Müller Süßwaren", "Initech Retail"}
	var bols []string
	for i := 0; i < 90; i++ {
		bol := fmt.Sprintf("MEDU%07d", 4100000+i*37)
		bols = append(bols, bol)
		tags := "{}"
		if i%3 == 0 {
			tags = "{reefer,hot}"
		}
		// Three records share each creation time: the order of ties is
		// the id's.
		at := base.Add(time.Duration(i/3) * time.Minute)
		ship := f.id(t, `INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number, ref_numbers, tags,
			customer_name, shipping_line_scac, shipping_line_name, shipping_line_short_name, created_at, updated_at)
			VALUES ($1, $2, $2, $3, $4, $5, 'MSCU', 'MSC', 'MSC', $6, $6) RETURNING id`,
			acct, bol, pq.StringArray{fmt.Sprintf("PO-%05d", 7000+i)}, tags, customers[i%len(customers)], at)
		for j := 0; j < 2; j++ {
			f.id(t, `INSERT INTO containers (account_id, shipment_id, number, ref_numbers, created_at, updated_at)
				VALUES ($1, $2, $3, '{}', $4, $4) RETURNING id`, acct, ship, fmt.Sprintf("TCLU%06d%d", 300000+i, j), at)
		}
		number := fmt.Sprintf("BKG%06d", 500000+i)
		if i%4 == 0 {
			number = bol // the shipment stands for it: never a result
		}
		f.id(t, `INSERT INTO tracking_requests (account_id, request_type, request_number, scac, tags, created_at, updated_at)
			VALUES ($1, 'bill_of_lading', $2, 'MSCU', '{tyrell}', $3, $3) RETURNING id`, acct, number, at)
	}
	// The oldest shipment of all has the word itself as its reference
	// number: exact, so first, though no window reaches it.
	f.id(t, `INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number, ref_numbers, customer_name,
		shipping_line_scac, shipping_line_name, shipping_line_short_name, created_at, updated_at)
		VALUES ($1, 'ONEU0000001', 'ONEU0000001', '{TYRELL}', 'Tyrell Textiles', 'MSCU', 'MSC', 'MSC', $2, $2) RETURNING id`,
		acct, base.Add(-24*time.Hour))

	// want is every match of every type, sorted, by brute force.
	want := func(query string) []string {
		t.Helper()
		var ids []string
		var kinds []int
		rows, err := f.SQL.QueryContext(ctx, `
WITH q AS (SELECT shipgraph_fold($2::text) AS f, shipgraph_tsquery($2::text) AS tq, length(shipgraph_fold($2::text)) >= 3 AS tri)
SELECT id, kind FROM (
    SELECT s.id, 1 AS kind, s.created_at,
        EXISTS (SELECT 1 FROM unnest(ARRAY[s.bill_of_lading_number] || coalesce(s.ref_numbers, '{}')) r WHERE shipgraph_fold(r) = q.f) AS exact
    FROM shipments s, q WHERE s.account_id = $1 AND ((q.tri AND s.search_doc LIKE '%' || q.f || '%') OR s.search_tsv @@ q.tq)
    UNION ALL
    SELECT c.id, 2, c.created_at, shipgraph_fold(c.number) = q.f
    FROM containers c, q WHERE c.account_id = $1 AND ((q.tri AND c.search_doc LIKE '%' || q.f || '%') OR c.search_tsv @@ q.tq)
    UNION ALL
    SELECT tr.id, 3, tr.created_at, shipgraph_fold(tr.request_number) = q.f
    FROM tracking_requests tr, q WHERE tr.account_id = $1 AND ((q.tri AND tr.search_doc LIKE '%' || q.f || '%') OR tr.search_tsv @@ q.tq)
      AND NOT EXISTS (SELECT 1 FROM shipments d WHERE d.account_id = $1 AND upper(d.bill_of_lading_number) = upper(tr.request_number))
) m ORDER BY kind, exact DESC, created_at DESC, id DESC`, acct, query)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id string
			var k int
			if err := rows.Scan(&id, &k); err != nil {
				t.Fatal(err)
			}
			ids, kinds = append(ids, id), append(kinds, k)
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
		// At most 25 of a type, then at most 25 in all.
		var out []string
		perKind := map[int]int{}
		for i, id := range ids {
			if perKind[kinds[i]]++; perKind[kinds[i]] <= 25 && len(out) < 25 {
				out = append(out, id)
			}
		}
		return out
	}
	queries := []string{"tyrell", "TYRELL textiles", "textiles tyr", "reefer", "wonka", "müller süß", "ty", "po",
		bols[40], strings.ToLower(bols[41][5:]), "po-07012", "tclu300012", "tclu3000", "bkg50008", "bkg", "zzzz",
		"confections hot"}
	for _, window := range []int{3, 7, 40, 100000} {
		f.DB.SetSearchWindow(window)
		for _, query := range queries {
			folded := 0
			for _, c := range query {
				if unicode.IsLetter(c) || unicode.IsDigit(c) {
					folded++
				}
			}
			res, err := f.DB.Search(ctx, acct, query, folded, 25)
			if err != nil {
				t.Fatalf("window %d, %q: %v", window, query, err)
			}
			var got []string
			for _, r := range res {
				got = append(got, r.ID)
			}
			if w := want(query); !slices.Equal(got, w) {
				t.Errorf("window %d, %q:\n got  %d %v\n want %d %v", window, query, len(got), got, len(w), w)
			}
		}
	}
	// The exact record leads a common word's results.
	f.DB.SetSearchWindow(0)
	res, err := f.DB.Search(ctx, acct, "Tyrell", 6, 25)
	if err != nil || len(res) != 25 || res[0].Number != "ONEU0000001" {
		t.Fatalf("search Tyrell: %v, %d results, first %+v; want 25, ONEU0000001 first", err, len(res), res)
	}
}
