package db_test

import (
	"context"
	"testing"

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
