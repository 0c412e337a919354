package db

import (
	"strings"
	"sync"
	"sync/atomic"

	"shipgraph/model"
)

// Reads select the columns their caller needs. A store narrowed by Select
// reads, for each type the selection names, only the columns listed there
// plus the keys every reader of that type relies on (ids, and the parent
// keys rows are grouped by); a type the selection does not name is read
// whole. A column that is not read keeps its zero value, so a selection
// must name every column its caller will look at: the GraphQL and /v2 load
// plans (graph/plan.go) build it from what a request asks for.

// picker narrows one type's select list.
type picker struct {
	all   string            // the whole select list
	order []string          // output names, in select-list order
	items map[string]string // output name → select item
	keys  map[string]bool   // always selected
	// made holds the lists already built, by listKey: a request shape
	// selects the same columns every time, so its reads reuse one string
	// instead of building it (a set, a builder) per statement. At most
	// maxMadeLists are kept; past that, lists are built per read.
	made  sync.Map
	madeN atomic.Int32
}

// maxMadeLists bounds a picker's made lists (selections are chosen by
// clients: an unbounded cache would grow with every new shape).
const maxMadeLists = 256

// optional adds select items that only a read naming them selects: the
// whole list (a read of the type not narrowed) leaves them out.
func (p *picker) optional(list string) *picker {
	for _, it := range splitSelect(list) {
		name := outputName(it)
		p.order = append(p.order, name)
		p.items[name] = it
	}
	return p
}

func newPicker(list string, keys ...string) *picker {
	p := &picker{all: list, items: map[string]string{}, keys: map[string]bool{}}
	for _, it := range splitSelect(list) {
		name := outputName(it)
		p.order = append(p.order, name)
		p.items[name] = it
	}
	for _, k := range keys {
		if _, ok := p.items[k]; !ok {
			panic("db: key " + k + " is not a column of " + list)
		}
		p.keys[k] = true
	}
	return p
}

// list returns the select list for the wanted columns (output names),
// the account placeholder (accountParam) of its items replaced by param
// ("$1", "$2"; "" for a type whose items name none); nil wants every
// column. Unknown names are ignored.
func (p *picker) list(want []string, param string) string {
	if want == nil {
		return p.all
	}
	key := listKey(want, param)
	if s, ok := p.made.Load(key); ok {
		return s.(string)
	}
	s := p.build(want, param)
	if p.madeN.Load() < maxMadeLists && p.madeN.Add(1) <= maxMadeLists {
		p.made.Store(key, s)
	}
	return s
}

// listKey names a selection of columns under one account parameter.
func listKey(want []string, param string) string {
	n := len(param)
	for _, w := range want {
		n += 1 + len(w)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(param)
	for _, w := range want {
		b.WriteByte(0)
		b.WriteString(w)
	}
	return b.String()
}

// build makes list's select list.
func (p *picker) build(want []string, param string) string {
	set := make(map[string]bool, len(want))
	for _, w := range want {
		set[w] = true
	}
	var b strings.Builder
	for _, name := range p.order {
		if p.keys[name] || set[name] {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString(p.items[name])
		}
	}
	if param == "" {
		return b.String()
	}
	return strings.ReplaceAll(b.String(), accountParam, param)
}

// pickers are the types whose reads can be narrowed: the ones a dashboard
// or a /v2 include list reads many rows of. A custom field value's entity
// and definition columns are read when a request shows those relationships
// (their key columns) or, in /v2, its links (rest/params.go, linkColumns):
// a dashboard that shows apiSlug and value reads four uuids less per value.
var pickers = map[string]*picker{
	"Shipment":    newPicker(shipmentCols, "id").optional(shipmentContainerIDsCol),
	"Container":   newPicker(containerCols, "id", "shipment_id").optional(containerJourneyCols),
	"Document":    newPicker(documentCols, "id"),
	"Terminal":    newPicker(terminalCols, "id"),
	"Port":        newPicker(portCols, "id"),
	"CustomField": newPicker(customFieldCols, "id", "entity_id", "api_slug"),
}

// Select returns the store narrowed to sel: its batch and page reads of
// the types sel names select only those columns (and their keys). It
// shares the connection pool with db.
func (db *DB) Select(sel model.Selection) *DB {
	return &DB{db: db.db, q: db.q, sel: sel, url: db.url, pooled: db.pooled, ref: db.ref, r: db.r, w: db.w, noRollups: db.noRollups}
}

// cols is the select list of typ under db's selection.
func (db *DB) cols(typ string) string { return db.colsAt(typ, "") }

// colsAt is cols with the account placeholder of the selected items as
// param. The whole list (typ not in the selection) has no optional items,
// so no placeholder.
func (db *DB) colsAt(typ, param string) string {
	p := pickers[typ]
	want, ok := db.sel[typ]
	if !ok {
		return p.all
	}
	return p.list(want, param)
}

// splitSelect splits a select list at its top-level commas.
func splitSelect(list string) []string {
	var items []string
	depth, start := 0, 0
	for i, c := range list {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				items = append(items, strings.TrimSpace(list[start:i]))
				start = i + 1
			}
		}
	}
	return append(items, strings.TrimSpace(list[start:]))
}

// outputName is the name a select item is read as: "… AS name" or the
// column of "alias.column".
func outputName(item string) string {
	if j := strings.LastIndex(item, " AS "); j >= 0 {
		return strings.TrimSpace(item[j+4:])
	}
	return item[strings.LastIndex(item, ".")+1:]
}
