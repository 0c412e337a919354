package jsonapi

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"shipgraph/model"
)

// Query parameters: include, sort, page[number], page[size], page[after],
// page[before], fields[TYPE] and the filters of each list, each checked
// against the allow-list of its endpoint. A bad value is a 400 naming the
// parameter (source.parameter).
//
// Unknown filter[…] and page[…] members are refused too (a misspelled
// filter that was silently ignored would answer with the wrong records), as
// are fields[…] naming an unknown type or member; other unknown parameters
// (cache busters) are ignored.

// maxPageNumber bounds page[number] before page[size] is known; with it,
// a numbered page may skip at most model.MaxPageOffset rows (checkDepth).
const maxPageNumber = model.MaxPageOffset + 1

// Endpoint describes what the query string of one endpoint may hold.
type Endpoint struct {
	// Serializer names the resource in the unknown-include message, which
	// keeps the live API's wording ("x is not specified as a relationship
	// on V2::DocumentSerializer").
	Serializer string
	// Includes maps each accepted include name to the relationship it
	// selects (aliases map to their target).
	Includes map[string]string
	// Sorts are the sortable fields; none means sort is refused.
	Sorts []string
	// Filters are the accepted filter parameters, by full name
	// ("filter[filename]", "q").
	Filters []string
	// Paged lists take page[number] and page[size].
	Paged bool
	// Cursors: the list also takes page[after] and page[before], the
	// keyset positions its links carry (store-backed lists only).
	Cursors bool
}

// Query is a parsed, validated query string.
type Query struct {
	Values url.Values
	// Include is the set of selected relationships (aliases resolved);
	// nil when include was absent or empty. Included resources come in
	// relationship order, whatever the order of the parameter.
	Include map[string]bool
	Sort    *Sort
	Page    model.PageInput
	// After and Before are the opaque keyset cursors of page[after] and
	// page[before] (at most one is set): the page is read from there, and
	// page[number] only numbers it for the links.
	After, Before string
	Filters       map[string]string
	// Fields are the sparse fieldsets by resource type; nil when none was
	// given.
	Fields map[string]map[string]bool
}

// Sort is the sort parameter: one field, ascending or descending.
type Sort struct {
	Field string
	Desc  bool
}

// BadParam is the 400 of a query parameter.
func BadParam(name, format string, args ...any) error {
	return model.Errorf(model.EINVALID, format, args...).AtParameter(name)
}

// ParseQuery reads the query string of r for endpoint e; types are the
// resource types fields[…] may name, each with the attributes and
// relationships it shows. Both literal and percent-encoded brackets
// (page%5Bsize%5D) arrive here decoded alike.
func ParseQuery(r *http.Request, e Endpoint, types map[string]map[string]bool) (*Query, error) {
	values, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, model.Errorf(model.EINVALID, "the query string is malformed: %s", queryError(err))
	}
	p := &Query{Values: values, Filters: map[string]string{}, Page: model.PageInput{Number: 1, Size: model.DefaultPageSize}}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys) // report the same error for the same request
	for _, k := range keys {
		if len(values[k]) > 1 && (k == "include" || k == "sort" || strings.HasPrefix(k, "page[") || slices.Contains(e.Filters, k)) {
			return nil, BadParam(k, "%s is given more than once", k)
		}
		v := values.Get(k)
		if strings.ContainsRune(v, 0) && (k == "include" || k == "sort" || strings.HasPrefix(k, "page[") || slices.Contains(e.Filters, k)) {
			// PostgreSQL text cannot hold NUL.
			return nil, BadParam(k, "%s must not contain NUL characters", k)
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
			if !e.Paged {
				return nil, BadParam(k, "%s is not supported here: this is not a list", k)
			}
			n, err := parsePageValue(k, v)
			if err != nil {
				return nil, err
			}
			if k == "page[number]" {
				p.Page.Number = n
			} else {
				p.Page.Size = n
			}
		case (k == "page[after]" || k == "page[before]") && e.Cursors:
			if strings.TrimSpace(v) == "" {
				return nil, BadParam(k, "%s must not be empty", k)
			}
			if k == "page[after]" {
				p.After = v
			} else {
				p.Before = v
			}
		case strings.HasPrefix(k, "fields[") && strings.HasSuffix(k, "]"):
			if len(values[k]) > 1 {
				return nil, BadParam(k, "%s is given more than once", k)
			}
			if err := p.parseFields(k, k[len("fields["):len(k)-1], v, types); err != nil {
				return nil, err
			}
		case slices.Contains(e.Filters, k):
			p.Filters[k] = strings.TrimSpace(v)
		case strings.HasPrefix(k, "filter[") || strings.HasPrefix(k, "page["):
			return nil, BadParam(k, "%s is not a supported parameter%s", k, supported(e))
		}
	}
	if p.After != "" && p.Before != "" {
		return nil, BadParam("page[before]", "page[after] and page[before] cannot be combined")
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
func (p *Query) checkDepth() error {
	if p.After != "" || p.Before != "" {
		return nil
	}
	if p.Page.Number-1 > model.MaxPageOffset/p.Page.Size {
		return BadParam("page[number]", "page[number] must be at most %d at page[size]=%d (a numbered page may start at most %d records into the list); follow links.next, which carries a cursor, to read further",
			model.MaxPageOffset/p.Page.Size+1, p.Page.Size, model.MaxPageOffset)
	}
	return nil
}

// Order is the store order of the sort parameter (nil: the list's
// default); ParseQuery checked the field against the endpoint's sorts.
func (p *Query) Order() *model.Order {
	if p.Sort == nil {
		return nil
	}
	return &model.Order{Field: p.Sort.Field, Desc: p.Sort.Desc}
}

// CursorError names the cursor parameter in a resolver's refusal of it
// (malformed, or taken with another sort).
func (p *Query) CursorError(err error) error {
	var e *model.Error
	if p.After == "" && p.Before == "" || !errors.As(err, &e) || e.Code != model.EINVALID || e.Parameter != "" {
		return err
	}
	name := "page[after]"
	if p.Before != "" {
		name = "page[before]"
	}
	return e.AtParameter(name)
}

// AtParameter names in err, an error of the resolver layer naming one of
// its arguments, the query parameter that carries the argument (names:
// argument → parameter).
func AtParameter(err error, names map[string]string) error {
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

func supported(e Endpoint) string {
	if len(e.Filters) == 0 {
		return ""
	}
	return "; filters here: " + strings.Join(e.Filters, ", ")
}

func parsePageValue(name, v string) (int, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, BadParam(name, "%s is too large", name)
		}
		return 0, BadParam(name, "%s must be an integer, not %q", name, v)
	}
	if n < 1 {
		return 0, BadParam(name, "%s must be at least 1", name)
	}
	if name == "page[size]" && n > model.MaxPageSize {
		return 0, BadParam(name, "page[size] must be at most %d", model.MaxPageSize)
	}
	if name == "page[number]" && n > maxPageNumber {
		return 0, BadParam(name, "page[number] must be at most %d", maxPageNumber)
	}
	return int(n), nil
}

func (p *Query) parseInclude(v string, e Endpoint) error {
	for item := range strings.SplitSeq(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		rel, ok := e.Includes[item]
		if !ok {
			detail := item + " is not specified as a relationship on " + e.Serializer
			if strings.Contains(item, ".") {
				detail += " (nested includes are not supported)"
			}
			return model.Errorf(model.EINVALID, "%s", detail).AtParameter("include")
		}
		if p.Include == nil {
			p.Include = map[string]bool{}
		}
		p.Include[rel] = true
	}
	return nil
}

func (p *Query) parseSort(v string, e Endpoint) error {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	if len(e.Sorts) == 0 {
		return BadParam("sort", "this endpoint cannot be sorted")
	}
	if strings.Contains(v, ",") {
		return BadParam("sort", "only one sort field is supported (ties are broken by id)")
	}
	s := &Sort{Field: v}
	if f, ok := strings.CutPrefix(v, "-"); ok {
		s.Field, s.Desc = f, true
	}
	if !slices.Contains(e.Sorts, s.Field) {
		return BadParam("sort", "%s is not a sortable field; sortable fields: %s", s.Field, strings.Join(e.Sorts, ", "))
	}
	p.Sort = s
	return nil
}

// parseFields reads fields[typ]=v: every name must be an attribute or
// relationship of typ. An empty value shows no attribute or relationship.
func (p *Query) parseFields(param, typ, v string, types map[string]map[string]bool) error {
	known, ok := types[typ]
	if !ok {
		return BadParam(param, "%s: %q is not a resource type", param, typ)
	}
	set := map[string]bool{}
	for name := range strings.SplitSeq(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !known[name] {
			return BadParam(param, "%s: %q is not an attribute or relationship of %s", param, name, typ)
		}
		set[name] = true
	}
	if p.Fields == nil {
		p.Fields = map[string]map[string]bool{}
	}
	p.Fields[typ] = set
	return nil
}

// Filter returns a filter's value ("" when absent).
func (p *Query) Filter(name string) string { return p.Filters[name] }

// BoolFilter parses a true/false filter; absent or empty is nil.
func (p *Query) BoolFilter(name string) (*bool, error) {
	v := p.Filters[name]
	if v == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return nil, BadParam(name, "%s must be true or false, not %q", name, v)
	}
	return &b, nil
}

// EnumFilter reads a filter whose value is one of values, matched
// case-insensitively ("shipment" is Shipment); absent or empty is nil.
func EnumFilter[E ~string](p *Query, name string, values []string) (*E, error) {
	v := p.Filters[name]
	if v == "" {
		return nil, nil
	}
	for _, x := range values {
		if strings.EqualFold(x, v) {
			e := E(x)
			return &e, nil
		}
	}
	return nil, BadParam(name, "%s must be one of %s", name, strings.Join(values, ", "))
}

// ListFilter splits a comma-separated filter, dropping empty items.
func (p *Query) ListFilter(name string) []string {
	var out []string
	for item := range strings.SplitSeq(p.Filters[name], ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// TimeFilter parses an ISO 8601 timestamp filter; absent or empty is nil.
func (p *Query) TimeFilter(name string) (*time.Time, error) {
	v := p.Filter(name)
	if v == "" {
		return nil, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return &t, nil
		}
	}
	return nil, BadParam(name, "%s must be an ISO 8601 timestamp (2020-04-28T22:59:15Z) or date, not %q", name, v)
}

// IDFilter reads a filter that holds one id: a UUID in any case
// (normalised); anything else is a 400.
func (p *Query) IDFilter(name string) (*string, error) {
	v := p.Filter(name)
	if v == "" {
		return nil, nil
	}
	if !model.IsUUID(v) {
		return nil, BadParam(name, "%s must be a UUID", name)
	}
	id := model.NormalizeID(v)
	return &id, nil
}
