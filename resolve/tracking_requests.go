package resolve

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"shipgraph/carrier/numbers"
	"shipgraph/db"
	"shipgraph/load"
	"shipgraph/model"
)

// Tracking requests: the numbers an account asked to track, as
// records. Any key reads them; member and admin keys create and edit them
// (a viewer key is forbidden, as for every write). The poller moves them
// through their states; the API creates them pending.

// TrackingRequestQuery is the tracking request list's query.
type TrackingRequestQuery = Query[model.TrackingRequestFilter]

var trackingRequests = Kind[*model.TrackingRequest, model.TrackingRequestFilter]{
	order: defaultOrder,
	list:  (*db.DB).ListTrackingRequests, count: (*db.DB).CountTrackingRequests,
	id:    func(t *model.TrackingRequest) string { return t.ID },
	prime: func(l *load.Loaders) *load.Loader[*model.TrackingRequest] { return l.TrackingRequestByID },
}

// TrackingRequests lists the account's tracking requests, newest first.
func (r *Resolver) TrackingRequests(ctx context.Context, p *model.Principal, q TrackingRequestQuery) (*Page[*model.TrackingRequest], error) {
	var err error
	if q.Filter, err = checkTrackingRequestFilter(q.Filter); err != nil {
		return nil, err
	}
	return List(ctx, r, p, &trackingRequests, q)
}

// CountTrackingRequests counts the account's tracking requests f keeps.
func (r *Resolver) CountTrackingRequests(ctx context.Context, p *model.Principal, f model.TrackingRequestFilter) (int, error) {
	f, err := checkTrackingRequestFilter(f)
	if err != nil {
		return 0, err
	}
	return Count(ctx, r, p, &trackingRequests, f)
}

// checkTrackingRequestFilter checks the states and request types of f
// (an unknown one is invalid, naming the argument: statuses,
// requestTypes) and returns f with its SCACs in upper case.
func checkTrackingRequestFilter(f model.TrackingRequestFilter) (model.TrackingRequestFilter, error) {
	for _, s := range f.Statuses {
		if !slices.Contains(model.TrackingRequestStatuses.Values(), string(s)) {
			return f, model.Errorf(model.EINVALID, "a tracking request's status is one of %s, not '%s'", strings.Join(model.TrackingRequestStatuses.Values(), ", "), s).AtParameter("statuses")
		}
	}
	for _, t := range f.RequestTypes {
		if !slices.Contains(model.TrackingRequestTypes, t) {
			return f, model.Errorf(model.EINVALID, "a tracking request's request type is one of %s, not '%s'", strings.Join(model.TrackingRequestTypes, ", "), t).AtParameter("requestTypes")
		}
	}
	if len(f.Scacs) > 0 {
		scacs := make([]string, len(f.Scacs))
		for i, s := range f.Scacs {
			scacs[i] = strings.ToUpper(s)
		}
		f.Scacs = scacs
	}
	return f, nil
}

func trackingRequestLoader(l *load.Loaders) *load.Loader[*model.TrackingRequest] {
	return l.TrackingRequestByID
}

// TrackingRequest reads one of the account's tracking requests.
func (r *Resolver) TrackingRequest(ctx context.Context, p *model.Principal, id string, plan *load.Plan) (*model.TrackingRequest, error) {
	return get(ctx, p, trackingRequestLoader, "tracking request", id, plan)
}

// CreateTrackingRequest is a new tracking request. Invalid is an input
// error the transport found while decoding, reported after the key's role.
type CreateTrackingRequest struct {
	Input   model.TrackingRequestInput
	Invalid error
}

// UpdateTrackingRequest changes a tracking request's reference numbers and
// tags; Invalid as CreateTrackingRequest, reported once the request is
// found.
type UpdateTrackingRequest struct {
	ID      string
	Patch   model.TrackingRequestPatch
	Invalid error
}

// CreateTrackingRequest checks c and stores a pending request: the rules
// in order are the role, the request type, the number (normalised: upper
// case, no spaces or dashes; a container number's ISO 6346 check digit),
// the SCAC (a known shipping line that tracks this type of number and,
// when tracking runs, one CARRIERS connects to), the
// reference numbers and tags, and last the database's word on duplicates
// (one live request per number, type and SCAC in an account).
func (r *Resolver) CreateTrackingRequest(ctx context.Context, p *model.Principal, c CreateTrackingRequest) (*model.TrackingRequest, error) {
	if err := checkRequest(p, c.Invalid); err != nil {
		return nil, err
	}
	p, l, err := writer(ctx, p)
	if err != nil {
		return nil, err
	}
	if c.Invalid != nil {
		return nil, c.Invalid
	}
	in := c.Input
	t := &model.TrackingRequest{}
	switch typ := strings.TrimSpace(in.RequestType); {
	case typ == "":
		return nil, invalidField("request_type", "Request type can't be blank")
	case !slices.Contains(model.TrackingRequestTypes, typ):
		return nil, invalidField("request_type", "Request type '%s' is not valid; it is one of %s", typ, strings.Join(model.TrackingRequestTypes, ", "))
	default:
		t.RequestType = typ
	}
	var fault string
	t.RequestNumber, fault = trackingNumberFault(in.RequestNumber)
	switch {
	case t.RequestNumber == "":
		return nil, invalidField("request_number", "Request number can't be blank")
	case fault != "":
		return nil, invalidField("request_number", "Request number is not valid: %s", fault)
	case t.RequestType == "container" && !numbers.ContainerShape(t.RequestNumber):
		return nil, invalidField("request_number", "Request number '%s' is not a container number: four letters (the owner code and U, J or Z) and seven digits", t.RequestNumber)
	case t.RequestType == "container" && !numbers.ValidContainer(t.RequestNumber):
		return nil, invalidField("request_number", "Request number '%s' is not a valid container number: its check digit should be %d", t.RequestNumber, checkDigit(t.RequestNumber))
	}
	if strings.TrimSpace(in.Scac) == "" && in.AutoDetectScac {
		if in.Scac, err = r.detectScac(ctx, p, t.RequestNumber, t.RequestType); err != nil {
			return nil, err
		}
	}
	if t.Scac, err = r.checkScac(ctx, in.Scac, t.RequestType); err != nil {
		return nil, err
	}
	// A line the server has no connection to would fail at its first poll
	// as shipping_line_unreachable, which reads like a network fault: say
	// at once that it is the server's configuration.
	if r.Tracking != nil && !r.Tracking.Serves(t.Scac) {
		return nil, invalidField("scac", "Scac '%s' is a known shipping line, but this server has no carrier connection for it: it is not in the CARRIERS setting", t.Scac)
	}
	if t.RefNumbers, err = checkStrings("ref_numbers", in.RefNumbers); err != nil {
		return nil, err
	}
	if t.Tags, err = checkStrings("tags", in.Tags); err != nil {
		return nil, err
	}
	t.CustomerID = in.CustomerID
	if err := checkCustomer(ctx, l, t.CustomerID); err != nil {
		return nil, err
	}
	if t.Staged, err = r.stageCustomFields(ctx, l, p.AccountID, in.InitialCustomFields); err != nil {
		return nil, err
	}
	// Poll at once: the first poll is inserted in the transaction that
	// inserts the request (without an engine, the schedule picks every
	// due request up).
	var first *db.FirstPoll
	if r.Tracking != nil {
		first = &db.FirstPoll{Lease: r.Tracking.PollLease(), Enqueue: func(ctx context.Context, tx *sql.Tx, t *model.TrackingRequest) error {
			return r.Tracking.EnqueuePollTx(ctx, tx, p.AccountID, t.ID)
		}}
	}
	if err := r.DB.CreateTrackingRequest(ctx, p.AccountID, t, p.UserID, first); err != nil {
		if model.ErrorCode(err) != model.ECONFLICT {
			return nil, err
		}
		return nil, invalidField("request_number", "Request number '%s' is already being tracked with %s (request_type %s); a new request is possible once that one failed",
			t.RequestNumber, t.Scac, t.RequestType)
	}
	l.TrackingRequestByID.Prime(t.ID, t)
	return t, nil
}

// stageCustomFields checks a create's initial custom field values (the
// public API's initial_custom_fields) against the account's definitions as
// a value write would, and returns them as the request stores them, by
// definition id, for its first successful poll to write on the shipment
// and containers (db.ApplyTrackingPoll). A slug with no definition of the
// entity type, a missing or wrong value, a shipment value with a number and
// one definition given twice for the same target are 422s pointing at the
// member (initial_custom_fields/containers/1/value).
func (r *Resolver) stageCustomFields(ctx context.Context, l *load.Loaders, accountID string, in *model.InitialCustomFieldsInput) ([]model.StagedCustomField, error) {
	if in == nil {
		return nil, nil
	}
	var out []model.StagedCustomField
	for _, part := range []struct {
		member, entity string
		kind           model.CustomFieldEntityType
		items          []*model.InitialCustomFieldInput
	}{
		{"shipment", "shipment", "Shipment", in.Shipment},
		{"containers", "container", "Container", in.Containers},
	} {
		seen := map[string]bool{}
		for i, it := range part.items {
			at := fmt.Sprintf("initial_custom_fields/%s/%d", part.member, i)
			if it == nil {
				return nil, invalidField(at, "each initial custom field is an object with api_slug and value")
			}
			slug := strings.TrimSpace(it.APISlug)
			if slug == "" {
				return nil, invalidField(at+"/api_slug", "api_slug can't be blank")
			}
			def, err := r.definitionBySlug(ctx, accountID, part.kind, slug)
			if model.ErrorCode(err) == model.ENOTFOUND {
				return nil, invalidField(at+"/api_slug", "No %s custom field definition of the account has the api_slug '%s'", part.kind, slug)
			}
			if err != nil {
				return nil, err
			}
			if it.Value == nil || string(it.Value) == "null" {
				return nil, invalidField(at+"/value", "value can't be blank")
			}
			v, err := normalizeValue(ctx, l, def, it.Value)
			if err != nil {
				if e, ok := model.AsError(err); ok && e.Code == model.EINVALID {
					return nil, invalidField(at+"/value", "%s", e.Message)
				}
				return nil, err
			}
			number := ""
			if it.Number != nil {
				number = model.NormalizeTrackingNumber(*it.Number)
			}
			if part.entity == "shipment" && number != "" {
				return nil, invalidField(at+"/number", "a shipment's value names no container number")
			}
			if seen[def.ID+"/"+number] {
				return nil, invalidField(at+"/api_slug", "'%s' is given twice for the same %s", slug, part.entity)
			}
			seen[def.ID+"/"+number] = true
			out = append(out, model.StagedCustomField{DefinitionID: def.ID, Entity: part.entity, Value: v, Number: number})
		}
	}
	return out, nil
}

// detectScac is auto_detect_vocc_scac: the shipping line infer_number
// selects for number among those that track numbers of typ and, when
// tracking runs, that CARRIERS connects to; exactly one must be certain
// enough (infer_number's auto_select). The public service detects after
// the create and fails the request as scac_auto_detect_failed; here a
// request's SCAC is never null, so detection runs at the create and its
// failure is a 422 at auto_detect_vocc_scac (docs/decisions.md).
func (r *Resolver) detectScac(ctx context.Context, p *model.Principal, number, typ string) (string, error) {
	inferred, err := r.InferTrackingNumber(ctx, p, number)
	if err != nil {
		return "", err
	}
	var sure []string
	for _, c := range inferred.Candidates {
		if c.Confidence < 0.9 || r.Tracking != nil && !r.Tracking.Serves(c.Scac) {
			continue
		}
		if _, err := r.checkScac(ctx, c.Scac, typ); err == nil {
			sure = append(sure, c.Scac)
		}
	}
	if len(sure) != 1 || inferred.Validation.IsValid != nil && !*inferred.Validation.IsValid {
		return "", invalidField("auto_detect_vocc_scac", "No shipping line this server tracks could be inferred from request number '%s' (scac_auto_detect_failed): give its scac", number)
	}
	return sure[0], nil
}

// checkScac returns the SCAC of a shipping line that tracks numbers of typ.
func (r *Resolver) checkScac(ctx context.Context, scac, typ string) (string, error) {
	scac = strings.ToUpper(strings.TrimSpace(scac))
	if scac == "" {
		return "", invalidField("scac", "Scac can't be blank")
	}
	line, err := r.DB.FindShippingLineBySCAC(ctx, scac)
	if model.ErrorCode(err) == model.ENOTFOUND {
		return "", invalidField("scac", "Scac '%s' is not recognized", scac)
	} else if err != nil {
		return "", err
	}
	supported := map[string]bool{
		"bill_of_lading": line.BillOfLadingTrackingSupport,
		"booking_number": line.BookingNumberTrackingSupport,
		"container":      line.ContainerNumberTrackingSupport,
	}[typ]
	if !supported {
		return "", invalidField("scac", "Scac '%s' is not supported. We do not currently integrate with %s for %s numbers", scac, line.Name, strings.ReplaceAll(typ, "_", " "))
	}
	// An alternative SCAC tracks under the line's own.
	return line.Scac, nil
}

// UpdateTrackingRequest runs c and returns the request written.
func (r *Resolver) UpdateTrackingRequest(ctx context.Context, p *model.Principal, c UpdateTrackingRequest) (*model.TrackingRequest, error) {
	p, l, t, err := writeTarget(ctx, p, trackingRequestLoader, c.ID, "tracking request", c.Invalid)
	if err != nil {
		return nil, err
	}
	var patch db.TrackingRequestPatch
	if v, set := c.Patch.RefNumbers.ValueOK(); set {
		if patch.RefNumbers, err = checkStrings("ref_numbers", v); err != nil {
			return nil, err
		}
		patch.SetRefNumbers = true
	}
	if v, set := c.Patch.Tags.ValueOK(); set {
		if patch.Tags, err = checkStrings("tags", v); err != nil {
			return nil, err
		}
		patch.SetTags = true
	}
	w, err := r.DB.UpdateTrackingRequest(ctx, p.AccountID, t.ID, patch)
	if err != nil {
		return nil, err
	}
	l.TrackingRequestByID.Clear(w.ID)
	l.TrackingRequestByID.Prime(w.ID, w)
	return w, nil
}
