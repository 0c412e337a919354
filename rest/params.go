package rest

import (
	"net/http"

	"shipgraph/catalog"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// The query string is read by jsonapi.ParseQuery against the endpoint's
// allow-lists (jsonapi.Endpoint); params adds what the resolver layer takes
// of it: the load plan and the page arguments.

// endpoint describes what the query string of one endpoint may hold.
type endpoint = jsonapi.Endpoint

// params is a parsed, validated query string.
type params struct {
	*jsonapi.Query
	// plan is the load plan of the response (plan.go), which serveList
	// and serveOne set for the resolver layer to run.
	plan *resolve.Plan
}

// parseParams reads the query string of r for endpoint e; fields[…] may
// name the resource types /v2 renders (fields.go).
func parseParams(r *http.Request, e endpoint) (*params, error) {
	q, err := jsonapi.ParseQuery(r, e, resourceTypes())
	if err != nil {
		return nil, err
	}
	return &params{Query: q}, nil
}

// pageArgs returns the page arguments of the resolver layer's list: a
// numbered page, or page[size] records after (before) a cursor.
func (p *params) pageArgs() resolve.PageArgs {
	size := p.Page.Size
	switch {
	case p.After != "":
		return resolve.PageArgs{First: &size, After: &p.After}
	case p.Before != "":
		return resolve.PageArgs{Last: &size, Before: &p.Before}
	}
	page := p.Page
	return resolve.PageArgs{Page: &page}
}

// linkColumns are the columns a resource's links are built from whatever
// its fieldset shows (a custom field value's self link names its entity),
// for a /v2 read of the type through the plan (no /v2 relationship reads
// custom field values yet; their own endpoints read them whole).
var linkColumns = map[string][]string{
	"custom_field": {"shipment_id", "container_id", "tracking_request_id"},
}

// storeFields is what the store must read for the fieldsets of p, in the
// catalogue's terms: the columns of the attributes each type fields[…]
// names, and the key columns of its relationships, those it shows and
// those the includes follow.
//
// A type without fields[…] shows all its attributes and relationships: the
// store then reads their columns, not those no resource shows (account_id,
// updated_at of shipments and containers …).
func (p *params) storeFields() resolve.Fields {
	if len(p.Fields) == 0 {
		return allStoreFields()
	}
	out := resolve.Fields{}
	for typ := range resourceTypes() {
		res := catalog.ByJSONAPI(typ)
		names, ok := p.Fields[typ]
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
		for inc := range p.Include {
			if resourceTypes()[typ][inc] {
				addMember(out, res, inc)
			}
		}
	}
	return out
}
