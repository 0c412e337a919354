package rest

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"shipgraph/catalog"
	"shipgraph/model"
	"shipgraph/resolve"
)

// Query parameters: include, sort, page[number], page[size] and the filters
// of each list, each checked against the allow-list of its endpoint. A bad
// value is a 400 naming the parameter (source.parameter).
//
// Unknown filter[…] and page[…] members are refused too (a misspelled
// filter that was silently ignored would answer with the wrong records), as
// are fields[…] naming an unknown type or member (fields.go); other unknown
// parameters (cache busters) are ignored.

// maxPageNumber bounds page[number] before page[size] is known; with it,
// a numbered page may skip at most model.MaxPageOffset rows (checkDepth).
const maxPageNumber = model.MaxPageOffset + 1

// endpoint describes what the query string of one endpoint may hold.
type endpoint struct {
	// serializer names the resource in the unknown-include message, which
	// keeps the live API's wording ("x is not specified as a relationship
	// on V2::DocumentSerializer").
	serializer string
	// includes maps each accepted include name to the relationship it
	// selects (aliases map to their target).
	includes map[string]string
	// sorts are the sortable fields; none means sort is refused.
	sorts []string
	// filters are the accepted filter parameters, by full name
	// ("filter[filename]", "q").
	filters []string
	// paged lists take page[number] and page[size].
	paged bool
	// cursors: the list also takes page[after] and page[before], the
	// keyset positions its links carry (store-backed lists only).
	cursors bool
}

// params is a parsed, validated query string.
type params struct {
	values url.Values
	// include is the set of selected relationships (aliases resolved);
	// nil when include was absent or empty. Included resources come in
	// relationship order, whatever the order of the parameter.
	include map[string]bool
	sort    *sortParam
	page    model.PageInput
	// after and before are the opaque keyset cursors of page[after] and
	// page[before] (at most one is set): the page is read from there, and
	// page[number] only numbers it for the links.
	after, before string
	filters       map[string]string
	// fields are the sparse fieldsets by resource type (fields.go); nil
	// when none was given.
	fields map[string]map[string]bool
	// plan is the load plan of the response (plan.go), which serveList
	// and serveOne set for the resolver layer to run.
	plan *resolve.Plan
}

type sortParam struct {
	field string
	desc  bool
}

// badParam is the 400 of a query parameter.
func badParam(name, format string, args ...any) error {
	return model.Errorf(model.EINVALID, format, args...).AtParameter(name)
}

// parseParams reads the query string of r for endpoint e. Both literal and
// percent-encoded brackets (page%5Bsize%5D) arrive here decoded alike.
func parseParams(r *http.Request, e endpoint) (*params, error) {
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, model.Errorf(model.EINVALID, "the query string is malformed: %s", queryError(err))
	}
	p := &params{values: values, filters: map[string]string{}, page: model.PageInput{Number: 1, Size: model.DefaultPageSize}}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys) // report the same error for the same request
	for _, k := range keys {
		if len(values[k]) > 1 && (k == "include" || k == "sort" || strings.HasPrefix(k, "page[") || slices.Contains(e.filters, k)) {
			return nil, badParam(k, "%s is given more than once", k)
		}
		v := values.Get(k)
		if strings.ContainsRune(v, 0) && (k == "include" || k == "sort" || strings.HasPrefix(k, "page[") || slices.Contains(e.filters, k)) {
			// PostgreSQL text cannot hold NUL.
			return nil, badParam(k, "%s must not contain NUL characters", k)
		}
		switch {
		case k == "include":
			if err := p.parseInclude(v, e); err != nil {
				return nil, err
			}
		case k == "sort":
			if err := p.parseSort(v, e); err != nil {
				return nil, err
			}
		case k == "page[number]" || k == "page[size]":
			if !e.paged {
				return nil, badParam(k, "%s is not supported here: this is not a list", k)
			}
			n, err := parsePageValue(k, v)
			if err != nil {
				return nil, err
			}
			if k == "page[number]" {
				p.page.Number = n
			} else {
				p.page.Size = n
			}
		case (k == "page[after]" || k == "page[before]") && e.cursors:
			if strings.TrimSpace(v) == "" {
				return nil, badParam(k, "%s must not be empty", k)
			}
			if k == "page[after]" {
				p.after = v
			} else {
				p.before = v
			}
		case strings.HasPrefix(k, "fields[") && strings.HasSuffix(k, "]"):
			if len(values[k]) > 1 {
				return nil, badParam(k, "%s is given more than once", k)
			}
			if err := p.parseFields(k, k[len("fields["):len(k)-1], v); err != nil {
				return nil, err
			}
		case slices.Contains(e.filters, k):
			p.filters[k] = strings.TrimSpace(v)
		case strings.HasPrefix(k, "filter[") || strings.HasPrefix(k, "page["):
			return nil, badParam(k, "%s is not a supported parameter%s", k, supported(e))
		}
	}
	if p.after != "" && p.before != "" {
		return nil, badParam("page[before]", "page[after] and page[before] cannot be combined")
	}
	if err := p.checkDepth(); err != nil {
		return nil, err
	}
	return p, nil
}

// checkDepth bounds a numbered page (one without a cursor) to
// model.MaxPageOffset skipped rows: the skip costs an index walk as long as
// itself. Pages beyond are reached through links.next, whose cursor makes
// every page cost what the first does.
func (p *params) checkDepth() error {
	if p.after != "" || p.before != "" {
		return nil
	}
	if p.page.Number-1 > model.MaxPageOffset/p.page.Size {
		return badParam("page[number]", "page[number] must be at most %d at page[size]=%d (a numbered page may start at most %d records into the list); follow links.next, which carries a cursor, to read further",
			model.MaxPageOffset/p.page.Size+1, p.page.Size, model.MaxPageOffset)
	}
	return nil
}

// pageArgs returns the page arguments of the resolver layer's list: a
// numbered page, or page[size] records after (before) a cursor.
func (p *params) pageArgs() resolve.PageArgs {
	size := p.page.Size
	switch {
	case p.after != "":
		return resolve.PageArgs{First: &size, After: &p.after}
	case p.before != "":
		return resolve.PageArgs{Last: &size, Before: &p.before}
	}
	page := p.page
	return resolve.PageArgs{Page: &page}
}

// sortOrder is the store order of the sort parameter (nil: the list's
// default); parseSort checked the field against the endpoint's sorts.
func (p *params) sortOrder() *model.Order {
	if p.sort == nil {
		return nil
	}
	return &model.Order{Field: p.sort.field, Desc: p.sort.desc}
}

// cursorError names the cursor parameter in a resolver's refusal of it
// (malformed, or taken with another sort).
func (p *params) cursorError(err error) error {
	var e *model.Error
	if p.after == "" && p.before == "" || !errors.As(err, &e) || e.Code != model.EINVALID || e.Parameter != "" {
		return err
	}
	name := "page[after]"
	if p.before != "" {
		name = "page[before]"
	}
	return e.AtParameter(name)
}

// atParameter names in err, an error of the resolver layer naming one of
// its arguments, the query parameter that carries the argument (names:
// argument → parameter).
func atParameter(err error, names map[string]string) error {
	if e, ok := model.AsError(err); ok && names[e.Parameter] != "" {
		return e.AtParameter(names[e.Parameter])
	}
	return err
}

// queryError describes a url.ParseQuery failure without echoing internals.
func queryError(err error) string {
	if strings.Contains(err.Error(), "semicolon") {
		return "semicolons are not separators; use &"
	}
	return "bad percent-encoding"
}

func supported(e endpoint) string {
	if len(e.filters) == 0 {
		return ""
	}
	return "; filters here: " + strings.Join(e.filters, ", ")
}

func parsePageValue(name, v string) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, badParam(name, "%s is too large", name)
		}
		return 0, badParam(name, "%s must be an integer, not %q", name, v)
	}
	if n < 1 {
		return 0, badParam(name, "%s must be at least 1", name)
	}
	if name == "page[size]" && n > model.MaxPageSize {
		return 0, badParam(name, "page[size] must be at most %d", model.MaxPageSize)
	}
	if name == "page[number]" && n > maxPageNumber {
		return 0, badParam(name, "page[number] must be at most %d", maxPageNumber)
	}
	return int(n), nil
}

func (p *params) parseInclude(v string, e endpoint) error {
	for item := range strings.SplitSeq(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		rel, ok := e.includes[item]
		if !ok {
			detail := item + " is not specified as a relationship on " + e.serializer
			if strings.Contains(item, ".") {
				detail += " (nested includes are not supported)"
			}
			return model.Errorf(model.EINVALID, "%s", detail).AtParameter("include")
		}
		if p.include == nil {
			p.include = map[string]bool{}
		}
		p.include[rel] = true
	}
	return nil
}

func (p *params) parseSort(v string, e endpoint) error {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	if len(e.sorts) == 0 {
		return badParam("sort", "this endpoint cannot be sorted")
	}
	if strings.Contains(v, ",") {
		return badParam("sort", "only one sort field is supported (ties are broken by id)")
	}
	s := &sortParam{field: v}
	if f, ok := strings.CutPrefix(v, "-"); ok {
		s.field, s.desc = f, true
	}
	if !slices.Contains(e.sorts, s.field) {
		return badParam("sort", "%s is not a sortable field; sortable fields: %s", s.field, strings.Join(e.sorts, ", "))
	}
	p.sort = s
	return nil
}

// filter returns a filter's value ("" when absent).
func (p *params) filter(name string) string { return p.filters[name] }

// boolFilter parses a true/false filter; absent or empty is nil.
func (p *params) boolFilter(name string) (*bool, error) {
	v := p.filters[name]
	if v == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return nil, badParam(name, "%s must be true or false, not %q", name, v)
	}
	return &b, nil
}

// enumFilter reads a filter whose value is one of values, matched
// case-insensitively ("shipment" is Shipment); absent or empty is nil.
func enumFilter[E ~string](p *params, name string, values []string) (*E, error) {
	v := p.filters[name]
	if v == "" {
		return nil, nil
	}
	for _, x := range values {
		if strings.EqualFold(x, v) {
			e := E(x)
			return &e, nil
		}
	}
	return nil, badParam(name, "%s must be one of %s", name, strings.Join(values, ", "))
}

// listFilter splits a comma-separated filter, dropping empty items.
func (p *params) listFilter(name string) []string {
	var out []string
	for item := range strings.SplitSeq(p.filters[name], ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// parseFields reads fields[typ]=v: every name must be an attribute or
// relationship of typ. An empty value shows no attribute or relationship.
func (p *params) parseFields(param, typ, v string) error {
	known, ok := resourceTypes()[typ]
	if !ok {
		return badParam(param, "%s: %q is not a resource type", param, typ)
	}
	set := map[string]bool{}
	for name := range strings.SplitSeq(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !known[name] {
			return badParam(param, "%s: %q is not an attribute or relationship of %s", param, name, typ)
		}
		set[name] = true
	}
	if p.fields == nil {
		p.fields = map[string]map[string]bool{}
	}
	p.fields[typ] = set
	return nil
}

// storeFields is what the store must read for the fieldsets of p, in the
// catalogue's terms: the columns of the attributes each type fields[…]
// names, and the key columns of its relationships, those it shows and
// those the includes follow.
//
// A type without fields[…] shows all its attributes and relationships: the
// store then reads their columns, not those no resource shows (account_id,
// updated_at of shipments and containers …).
// linkColumns are the columns a resource's links are built from whatever
// its fieldset shows (a custom field value's self link names its entity),
// for a /v2 read of the type through the plan (no /v2 relationship reads
// custom field values yet; their own endpoints read them whole).
var linkColumns = map[string][]string{
	"custom_field": {"shipment_id", "container_id", "tracking_request_id"},
}

func (p *params) storeFields() resolve.Fields {
	if len(p.fields) == 0 {
		return allStoreFields()
	}
	out := resolve.Fields{}
	for typ := range resourceTypes() {
		res := catalog.ByJSONAPI(typ)
		names, ok := p.fields[typ]
		if !ok {
			if all := allStoreFields()[res]; all != nil {
				out[res] = all
			}
			continue
		}
		for n := range names {
			addMember(out, res, n)
		}
		for _, c := range linkColumns[typ] {
			out.AddColumn(res, c)
		}
		// The plan loads every to-many linkage whatever the fieldset
		// (planRels): the linkage a row can carry is read with it.
		for _, rel := range res.Members() {
			addHeld(out, res, rel)
		}
		for inc := range p.include {
			if resourceTypes()[typ][inc] {
				addMember(out, res, inc)
			}
		}
	}
	return out
}
