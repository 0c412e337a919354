package docproc

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// A rule is what makes a text look like one document type: its titles
// (a phrase that names the type; worth most on the first lines, where a
// form prints its title: the layout), and the labels of the fields its
// layout has (shipper, consignee, unit price …), each a whole-word,
// case-insensitive phrase.
type rule struct {
	typ    string
	titles []string
	labels []string
}

// Weights of the score: a title on the first headLines lines, a title
// further down, and a field label.
const (
	headLines    = 6
	titleHead    = 6
	titleBody    = 3
	labelWeight  = 1
	minimumScore = 4 // below it the document is "other"
)

// rules is THE table of the classifier, one row per code of
// model.DocumentTypes but "other" (what nothing matches).
var rules = []rule{
	{"bill_of_lading",
		[]string{"bill of lading", "sea waybill", "ocean bill of lading", "waybill"},
		[]string{"shipper", "consignee", "notify party", "port of loading", "port of discharge", "vessel", "voyage", "place of receipt", "place of delivery", "freight", "b/l no", "number of original"}},
	{"commercial_invoice",
		[]string{"commercial invoice", "invoice"},
		[]string{"invoice no", "invoice number", "invoice date", "unit price", "amount", "total", "currency", "payment terms", "incoterms", "seller", "buyer", "sold to", "bill to"}},
	{"packing_list",
		[]string{"packing list", "packing slip"},
		[]string{"gross weight", "net weight", "packages", "cartons", "measurement", "cbm", "marks and numbers", "dimensions", "qty"}},
	{"certificate_of_origin",
		[]string{"certificate of origin"},
		[]string{"country of origin", "exporter", "producer", "chamber of commerce", "origin criterion", "hereby certify", "certifying authority", "hs code"}},
	{"arrival_notice",
		[]string{"arrival notice", "notice of arrival"},
		[]string{"eta", "estimated arrival", "last free day", "freight charges", "charges due", "pickup location", "terminal", "it number", "available for pickup"}},
	{"delivery_order",
		[]string{"delivery order"},
		[]string{"deliver to", "release", "pickup", "trucker", "delivery address", "release number", "empty return", "appointment"}},
	{"customs_entry",
		[]string{"entry summary", "customs entry", "cbp form 7501", "customs declaration"},
		[]string{"entry no", "entry number", "entry type", "importer of record", "hts", "duty", "port code", "bond", "filer code", "entered value"}},
}

// phrase matches one phrase as whole words, case-insensitively.
func phrase(p string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(^|[^\pL\pN])` + strings.ReplaceAll(regexp.QuoteMeta(p), `\ `, `\s+`) + `($|[^\pL\pN])`)
}

type compiledRule struct {
	typ            string
	titles, labels []*regexp.Regexp
	names          []string
}

var compiled = func() []compiledRule {
	out := make([]compiledRule, len(rules))
	for i, r := range rules {
		c := compiledRule{typ: r.typ}
		for _, t := range r.titles {
			c.titles = append(c.titles, phrase(t))
		}
		for _, l := range r.labels {
			c.labels = append(c.labels, phrase(l))
		}
		c.names = append(append([]string{}, r.titles...), r.labels...)
		out[i] = c
	}
	return out
}()

// Classification is the classifier's answer: the type (a code of
// model.DocumentTypes) and the notes saying why.
type Classification struct {
	Type  string
	Notes string
}

// Classify picks the document type of text by the rules: each type scores
// its best title (more on the first lines) and one point per field label
// found; the best score at or above minimumScore wins (ties go to the
// table's order), anything less is "other".
func Classify(text string) Classification {
	lines := strings.SplitN(text, "\n", headLines+1)
	head := strings.Join(lines[:min(len(lines), headLines)], "\n")
	type score struct {
		typ   string
		n     int
		found []string
	}
	var scores []score
	for _, r := range compiled {
		s := score{typ: r.typ}
		best := 0
		for i, t := range r.titles {
			w := 0
			switch {
			case t.MatchString(head):
				w = titleHead
			case t.MatchString(text):
				w = titleBody
			}
			if w > best {
				best = w
			}
			if w > 0 {
				s.found = append(s.found, fmt.Sprintf("title %q", r.names[i]))
			}
		}
		s.n = best
		for i, l := range r.labels {
			if l.MatchString(text) {
				s.n += labelWeight
				s.found = append(s.found, fmt.Sprintf("%q", r.names[len(r.titles)+i]))
			}
		}
		scores = append(scores, s)
	}
	sort.SliceStable(scores, func(i, j int) bool { return scores[i].n > scores[j].n })
	top := scores[0]
	if top.n < minimumScore {
		return Classification{Type: "other", Notes: fmt.Sprintf("rules: no type reached score %d (best %s with %d)", minimumScore, top.typ, top.n)}
	}
	notes := fmt.Sprintf("rules: %s scored %d (%s)", top.typ, top.n, strings.Join(top.found, ", "))
	if len(scores) > 1 && scores[1].n > 0 {
		notes += fmt.Sprintf("; next %s with %d", scores[1].typ, scores[1].n)
	}
	return Classification{Type: top.typ, Notes: notes}
}

// Types are the codes the classifier can answer, in the table's order,
// then "other".
func Types() []string {
	out := make([]string, 0, len(rules)+1)
	for _, r := range rules {
		out = append(out, r.typ)
	}
	return append(out, "other")
}
