package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"shipgraph/catalog"
	"shipgraph/model"
	"shipgraph/resolve"
	"shipgraph/rest/jsonapi"
)

// Tracking requests, records of their own since migration 00013:
//
//	GET, POST   /v2/tracking_requests
//	GET, PATCH  /v2/tracking_requests/{id}
//	POST        /v2/tracking_requests/infer_number
//
// They are also the reference objects of the tracking_request.* webhook
// events (in notifications' included). The list takes the OpenAPI
// document's filters (status, request_type, scac, request_number,
// created_at and updated_at ranges) and, beyond it, filter[tags] and q;
// include=tracked_object,customer (a party; the create takes it
// as data.relationships.customer).

var (
	trackingRequestIncludes = includes(catalog.TrackingRequest)
	trackingRequestList     = endpoint{
		Serializer: "V2::TrackingRequestSerializer",
		Includes:   trackingRequestIncludes,
		Sorts:      []string{"created_at", "updated_at"},
		Filters: []string{"q", "filter[status]", "filter[request_type]", "filter[scac]", "filter[request_number]", "filter[tags]",
			"filter[created_at][start]", "filter[created_at][end]", "filter[updated_at][start]", "filter[updated_at][end]"},
		Paged:   true,
		Cursors: true,
	}
	trackingRequestItem = endpoint{Serializer: "V2::TrackingRequestSerializer", Includes: trackingRequestIncludes}
	inferNumberItem     = endpoint{Serializer: "V2::InferNumberSerializer"}
)

// trackingRequestEditable are the attributes PATCH may set; any other is a
// 422 rather than silently ignored. The OpenAPI document's request body
// names one ref_number (a string); ref_numbers and tags are what the
// record holds, and ref_number is taken as a list of one.
var trackingRequestEditable = []string{"ref_number", "ref_numbers", "tags"}

func (s *server) listTrackingRequests(w http.ResponseWriter, r *http.Request) {
	serveList(s, w, r, trackingRequestList, func(ctx context.Context, p *params) (listPage[*model.TrackingRequest], error) {
		filter, err := trackingRequestFilter(p)
		if err != nil {
			return listPage[*model.TrackingRequest]{}, err
		}
		pg, err := s.res.TrackingRequests(ctx, who(r), resolve.TrackingRequestQuery{Filter: filter, Order: p.Order(), Page: p.pageArgs(), Plan: p.plan})
		if err != nil {
			return listPage[*model.TrackingRequest]{}, jsonapi.AtParameter(p.CursorError(err), trackingRequestParams)
		}
		return fromPage(pg, func(ctx context.Context) (int, error) { return s.res.CountTrackingRequests(ctx, who(r), filter) }), nil
	}, withIncludes)
}

// trackingRequestParams are the query parameters of the resolver layer's
// filter arguments.
var trackingRequestParams = map[string]string{"statuses": "filter[status]", "requestTypes": "filter[request_type]"}

// trackingRequestFilter reads the list's filters; the resolver layer
// checks them.
func trackingRequestFilter(p *params) (f model.TrackingRequestFilter, err error) {
	for _, v := range p.ListFilter("filter[status]") {
		f.Statuses = append(f.Statuses, model.TrackingRequestStatus(v))
	}
	f.RequestTypes = p.ListFilter("filter[request_type]")
	f.Scacs = p.ListFilter("filter[scac]")
	f.RequestNumber = p.Filter("filter[request_number]")
	f.Search = p.Filter("q")
	f.Tags = p.ListFilter("filter[tags]")
	for _, t := range []struct {
		name string
		to   **time.Time
	}{
		{"filter[created_at][start]", &f.CreatedFrom}, {"filter[created_at][end]", &f.CreatedTo},
		{"filter[updated_at][start]", &f.UpdatedFrom}, {"filter[updated_at][end]", &f.UpdatedTo},
	} {
		if *t.to, err = p.TimeFilter(t.name); err != nil {
			return f, err
		}
	}
	return f, nil
}

func (s *server) getTrackingRequest(w http.ResponseWriter, r *http.Request) {
	serveOne(s, w, r, trackingRequestItem, (s.res.TrackingRequest), withIncludes)
}

func (s *server) createTrackingRequest(w http.ResponseWriter, r *http.Request) {
	p, err := parseParams(r, trackingRequestItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, rels, bad := jsonapi.ReadResource(r, model.TrackingRequestType)
	in, invalid := trackingRequestInput(attrs)
	if customer, err := customerOf(rels); err != nil {
		if invalid == nil {
			invalid = err
		}
	} else {
		in.CustomerID = customer
	}
	t, err := s.res.CreateTrackingRequest(r.Context(), who(r), resolve.CreateTrackingRequest{Input: in, Invalid: firstErr(resolve.Malformed(bad), invalid)})
	serveCreated(s, w, r, p, t, err, withIncludes)
}

func (s *server) updateTrackingRequest(w http.ResponseWriter, r *http.Request) {
	p, err := parseParams(r, trackingRequestItem)
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	attrs, bad := writeBody(r, model.TrackingRequestType)
	// An attribute error is answered once the request is found (404
	// first), as the resolver layer orders it.
	patch, invalid := trackingRequestPatch(attrs)
	t, err := s.res.UpdateTrackingRequest(r.Context(), who(r), resolve.UpdateTrackingRequest{ID: r.PathValue("id"), Patch: patch, Invalid: firstErr(bad, invalid)})
	serveWritten(s, w, r, p, t, err, withIncludes)
}

// trackingRequestInput reads the attributes of a POST. shipment_tags (the
// OpenAPI document's name) and tags are the same list.
func trackingRequestInput(attrs jsonapi.Attributes) (in model.TrackingRequestInput, err error) {
	var auto *bool
	err = attrs.Read(jsonapi.Str("request_type", false, &in.RequestType), jsonapi.Str("request_number", false, &in.RequestNumber),
		jsonapi.Str("scac", false, &in.Scac), jsonapi.BoolP("auto_detect_vocc_scac", &auto),
		jsonapi.Strings("ref_numbers", &in.RefNumbers), jsonapi.Strings("shipment_tags", &in.Tags))
	in.AutoDetectScac = auto != nil && *auto
	if _, ok := attrs["tags"]; ok && err == nil {
		in.Tags, _, err = attrs.StringList("tags")
	}
	if err == nil {
		in.InitialCustomFields, err = initialCustomFields(attrs["initial_custom_fields"])
	}
	return in, err
}

// initialCustomFields reads initial_custom_fields, the OpenAPI document's
// {"shipment": [{api_slug, value}], "containers": [{api_slug, value,
// number?}]}: its shape only (the resolver layer checks the slugs and
// values). Absent or null: none.
func initialCustomFields(raw json.RawMessage) (*model.InitialCustomFieldsInput, error) {
	const name = "initial_custom_fields"
	if raw == nil || jsonapi.IsNull(raw) {
		return nil, nil
	}
	var parts map[string]json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, jsonapi.AttrError(name, "initial_custom_fields must be an object with shipment and containers lists")
	}
	out := &model.InitialCustomFieldsInput{}
	for _, member := range slices.Sorted(maps.Keys(parts)) {
		var list *[]*model.InitialCustomFieldInput
		switch member {
		case "shipment":
			list = &out.Shipment
		case "containers":
			list = &out.Containers
		default:
			return nil, jsonapi.AttrError(name+"/"+member, "initial_custom_fields takes shipment and containers, not %s", member)
		}
		if jsonapi.IsNull(parts[member]) {
			continue
		}
		var items []json.RawMessage
		if err := json.Unmarshal(parts[member], &items); err != nil {
			return nil, jsonapi.AttrError(name+"/"+member, "%s must be a list of {api_slug, value} objects", member)
		}
		for i, item := range items {
			at := fmt.Sprintf("%s/%s/%d", name, member, i)
			var f map[string]json.RawMessage
			if err := json.Unmarshal(item, &f); err != nil || f == nil {
				return nil, jsonapi.AttrError(at, "each initial custom field is an object with api_slug and value")
			}
			it := &model.InitialCustomFieldInput{Value: model.JSON(f["value"])}
			for _, k := range slices.Sorted(maps.Keys(f)) {
				var s *string
				switch k {
				case "value":
					continue
				case "api_slug", "number":
					if err := json.Unmarshal(f[k], &s); err != nil {
						return nil, jsonapi.AttrError(at+"/"+k, "%s must be a string", k)
					}
				default:
					return nil, jsonapi.AttrError(at+"/"+k, "an initial custom field has api_slug, value and (for containers) number, not %s", k)
				}
				if k == "number" {
					it.Number = s
				} else if s != nil {
					it.APISlug = *s
				}
			}
			*list = append(*list, it)
		}
	}
	return out, nil
}

// trackingRequestPatch reads ref_number (one), ref_numbers and tags: lists
// of strings, or null to clear them.
func trackingRequestPatch(attrs jsonapi.Attributes) (p model.TrackingRequestPatch, err error) {
	if err := attrs.Only("%s cannot be changed; a tracking request's editable attributes are ref_numbers (or ref_number) and tags", trackingRequestEditable...); err != nil {
		return p, err
	}
	if raw, ok := attrs["ref_number"]; ok {
		var v *string
		if json.Unmarshal(raw, &v) != nil {
			return p, jsonapi.AttrError("ref_number", "ref_number must be a string or null")
		}
		refs := []string{}
		if v != nil {
			refs = append(refs, *v)
		}
		p.RefNumbers = model.Given(refs)
	}
	if _, ok := attrs["ref_numbers"]; ok {
		if p.RefNumbers, err = attrs.OptionalList("ref_numbers"); err != nil {
			return p, err
		}
	}
	p.Tags, err = attrs.OptionalList("tags")
	return p, err
}

// ---------------------------------------------------------------- infer_number

// inferNumber answers POST /v2/tracking_requests/infer_number: a body of
// {"number": "…"} (or the JSON:API shape with data.attributes.number).
func (s *server) inferNumber(w http.ResponseWriter, r *http.Request) {
	if _, err := parseParams(r, inferNumberItem); err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	var body struct {
		Number *string `json:"number"`
		Data   *struct {
			Attributes struct {
				Number *string `json:"number"`
			} `json:"attributes"`
		} `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		jsonapi.WriteError(w, r, jsonapi.StatusErrorf(http.StatusBadRequest, "the body must be a JSON object with a number: {\"number\": \"WHLU1234560\"}"))
		return
	}
	number := body.Number
	if number == nil && body.Data != nil {
		number = body.Data.Attributes.Number
	}
	if number == nil {
		jsonapi.WriteError(w, r, model.Errorf(model.EINVALID, "number can't be blank").AtPointer("/number"))
		return
	}
	res, err := s.res.InferTrackingNumber(r.Context(), who(r), *number)
	if e, ok := model.AsError(err); ok && e.Field == "number" {
		// The body is {"number": …}, not a JSON:API resource.
		c := *e
		c.Field = ""
		err = c.AtPointer("/number")
	}
	if err != nil {
		jsonapi.WriteError(w, r, err)
		return
	}
	jsonapi.WriteDocument(w, r, http.StatusOK, &Document{Data: &Resource{ID: "req_" + res.Number, Type: "infer_number_results", Attributes: inferAttributes(res)}})
}

// inferNumberAttributes are infer_number's answer: the decision and the
// candidates grouped as shipping_line.
type inferNumberAttributes struct {
	NumberType   string                 `json:"number_type"`
	Validation   model.NumberValidation `json:"validation"`
	ShippingLine struct {
		Decision   string                 `json:"decision"`
		Selected   *model.ScacCandidate   `json:"selected"`
		Candidates []*model.ScacCandidate `json:"candidates"`
	} `json:"shipping_line"`
}

func inferAttributes(n *model.InferredNumber) inferNumberAttributes {
	out := inferNumberAttributes{NumberType: n.NumberType, Validation: n.Validation}
	out.ShippingLine.Decision, out.ShippingLine.Selected, out.ShippingLine.Candidates = n.Decision, n.Selected, orEmpty(n.Candidates)
	return out
}
