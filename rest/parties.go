package rest

import (
	"context"
	"encoding/json"
	"net/http"

	"shipgraph/catalog"
	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// Parties: an account's customers.
//
//	GET, POST  /v2/parties
//	GET, PATCH /v2/parties/{id}
//
// A party is also a tracking request's customer (include=customer). PATCH
// renames it (company_name, the create's rules).

var (
	partyList = endpoint{Serializer: "V2::PartySerializer", Includes: includes(catalog.Party), Paged: true}
	partyItem = endpoint{Serializer: "V2::PartySerializer", Includes: includes(catalog.Party)}
)

func (s *server) listParties(w http.ResponseWriter, r *http.Request) {
	caller := who(r)
	serveList(s, w, r, partyList, func(ctx context.Context, p *params) (listPage[*model.Party], error) {
		pg, err := s.res.Parties(ctx, caller, resolve.PartyQuery{Page: resolve.PageArgs{Page: &p.Page}})
		if err != nil {
			return listPage[*model.Party]{}, err
		}
		return fromPage(pg, func(ctx context.Context) (int, error) { return s.res.CountParties(ctx, caller) }), nil
	}, withIncludes)
}

func (s *server) getParty(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, partyItem, func(ctx context.Context, p *model.Principal, id string, _ *resolve.Plan) (*model.Party, error) {
		return s.res.Party(ctx, p, id)
	}, withIncludes)
}

func (s *server) createParty(w http.ResponseWriter, r *http.Request) {
	caller := who(r)
	p, err := parseParams(r, partyItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, bad := writeBody(r, model.PartyType)
	name, invalid := attrs.Text("company_name", false)
	c := resolve.CreateParty{Invalid: firstErr(bad, invalid)}
	if name != nil {
		c.Input.CompanyName = *name
	}
	v, err := s.res.CreateParty(r.Context(), caller, c)
	serveCreated(s, w, r, p, v, err, withIncludes)
}

// customerOf reads a tracking request body's customer relationship:
// {"data": {"type": "party", "id": "…"}} or {"data": null}; nil when
// absent.
func customerOf(rels map[string]json.RawMessage) (*string, error) {
	raw, ok := rels["customer"]
	if !ok || jsonapi.IsNull(raw) {
		return nil, nil
	}
	data, ok := jsonapi.ToOneData(raw)
	if !ok {
		return nil, model.Errorf(model.EINVALID, "customer must be {\"data\": {\"type\": \"party\", \"id\": …}}").AtPointer("/data/relationships/customer")
	}
	if data == nil {
		return nil, nil
	}
	if data.Type != model.PartyType || data.ID == "" {
		return nil, model.Errorf(model.EINVALID, "customer must name a party: {\"type\": \"party\", \"id\": …}").AtPointer("/data/relationships/customer/data")
	}
	return &data.ID, nil
}

// updateParty answers PATCH /v2/parties/{id}: company_name, by the
// create's rules; 200 with the party.
func (s *server) updateParty(w http.ResponseWriter, r *http.Request) {
	p, err := parseParams(r, partyItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, bad := writeBody(r, model.PartyType)
	c := resolve.UpdateParty{ID: r.PathValue("id"), Invalid: firstErr(bad, attrs.Only("%s cannot be changed; a party's editable attribute is company_name", "company_name"))}
	name, err := attrs.Text("company_name", true)
	if c.Invalid == nil {
		c.Invalid = err
	}
	if name != nil {
		c.Patch.CompanyName = *name
	}
	v, err := s.res.UpdateParty(r.Context(), who(r), c)
	serveWritten(s, w, r, p, v, err, withIncludes)
}
