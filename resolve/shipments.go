package resolve

import (
	"context"
	"strings"

	"shipgraph/db"
	"shipgraph/load"
	"shipgraph/model"
)

// Shipment writes: reference numbers and tags, and stopping and
// resuming tracking at the shipping line.

// UpdateShipment sets a shipment's reference numbers and tags; an omitted
// one is kept, null clears it. Invalid is an input error the transport
// found decoding the command, reported after the target's checks.
type UpdateShipment struct {
	ID               string
	RefNumbers, Tags model.Optional[[]string]
	Invalid          error
}

// checkStrings trims a list of strings, drops empty and repeated ones, and
// bounds it (at most 100 items of 255 characters).
func checkStrings(name string, in []string) ([]string, error) {
	if in == nil {
		return nil, nil
	}
	out := []string{}
	seen := map[string]bool{}
	for _, s := range in {
		s = strings.TrimSpace(s)
		if len(s) > 255 {
			return nil, invalidField(name, "each of %s must be at most 255 characters", name)
		}
		if fault := textFault(s); fault != "" {
			return nil, invalidField(name, "%s is not valid: %s", name, fault)
		}
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	if len(out) > 100 {
		return nil, invalidField(name, "%s must have at most 100 items", name)
	}
	return out, nil
}

// shipmentWrite checks what every shipment write checks first: the key
// may write, the shipment is the account's.
func shipmentWrite(ctx context.Context, p *model.Principal, id string, invalid error) (*model.Principal, *load.Loaders, *model.Shipment, error) {
	return writeTarget(ctx, p, func(l *load.Loaders) *load.Loader[*model.Shipment] { return l.ShipmentByID }, id, "shipment", invalid)
}

// wroteShipment replaces the loader's copy of a shipment by the written one.
func wroteShipment(l *load.Loaders, s *model.Shipment, err error) (*model.Shipment, error) {
	if err != nil {
		return nil, err
	}
	l.ShipmentByID.Clear(s.ID)
	l.ShipmentByID.Prime(s.ID, s)
	return s, nil
}

// UpdateShipment runs c and returns the shipment written.
func (r *Resolver) UpdateShipment(ctx context.Context, p *model.Principal, c UpdateShipment) (*model.Shipment, error) {
	p, l, s, err := shipmentWrite(ctx, p, c.ID, c.Invalid)
	if err != nil {
		return nil, err
	}
	var patch db.ShipmentPatch
	if v, set := c.RefNumbers.ValueOK(); set {
		if patch.RefNumbers, err = checkStrings("ref_numbers", v); err != nil {
			return nil, err
		}
		patch.SetRefNumbers = true
	}
	if v, set := c.Tags.ValueOK(); set {
		if patch.Tags, err = checkStrings("tags", v); err != nil {
			return nil, err
		}
		patch.SetTags = true
	}
	w, err := r.DB.UpdateShipment(ctx, p.AccountID, s.ID, patch)
	return wroteShipment(l, w, err)
}

// StopTracking stops tracking the shipment id at its shipping line.
func (r *Resolver) StopTracking(ctx context.Context, p *model.Principal, id string) (*model.Shipment, error) {
	p, l, s, err := shipmentWrite(ctx, p, id, nil)
	if err != nil {
		return nil, err
	}
	w, err := r.DB.StopTracking(ctx, p.AccountID, s.ID, p.UserID)
	return wroteShipment(l, w, err)
}

// ResumeTracking resumes tracking the shipment id.
func (r *Resolver) ResumeTracking(ctx context.Context, p *model.Principal, id string) (*model.Shipment, error) {
	p, l, s, err := shipmentWrite(ctx, p, id, nil)
	if err != nil {
		return nil, err
	}
	w, err := r.DB.ResumeTracking(ctx, p.AccountID, s.ID)
	return wroteShipment(l, w, err)
}
