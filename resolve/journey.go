package resolve

import (
	"context"
	"time"

	"shipgraph/catalog"
	"shipgraph/load"
	"shipgraph/model"
)

// The journey of a container: its transport events and raw events (the
// account's: another account's container is not found), its route, and
// vessels (reference data) with the future positions the account's own
// events plan for them.

// ContainerTransportEvents reads the transport events of one of the
// account's containers, in time order; plan runs below them.
func (r *Resolver) ContainerTransportEvents(ctx context.Context, p *model.Principal, containerID string, plan *load.Plan) ([]*model.TransportEvent, error) {
	if _, _, err := begin(ctx, p, plan); err != nil {
		return nil, err
	}
	c, err := r.Container(ctx, p, containerID, load.NewPlan(catalog.Container, "transportEvents"))
	if err != nil {
		return nil, err
	}
	events := c.TransportEvents()
	return events, load.Load(ctx, events, plan)
}

// ContainerRawEvents reads the raw events of one of the account's
// containers, in time order; plan runs below them.
func (r *Resolver) ContainerRawEvents(ctx context.Context, p *model.Principal, containerID string, plan *load.Plan) ([]*model.RawEvent, error) {
	if _, _, err := begin(ctx, p, plan); err != nil {
		return nil, err
	}
	c, err := r.Container(ctx, p, containerID, load.NewPlan(catalog.Container, "rawEvents"))
	if err != nil {
		return nil, err
	}
	events := c.RawEvents()
	return events, load.Load(ctx, events, plan)
}

// ContainerRoute reads the route of one of the account's containers: its
// port calls, derived from its transport events (model.RouteOf), with
// their ports and vessels. Three statements: the container, its events,
// then their ports and vessels (reference data, usually cached).
func (r *Resolver) ContainerRoute(ctx context.Context, p *model.Principal, containerID string) (*model.Route, error) {
	c, err := r.Container(ctx, p, containerID, load.NewPlan(catalog.Container, "transportEvents.location", "transportEvents.vessel"))
	if err != nil {
		return nil, err
	}
	return model.RouteOf(c, c.TransportEvents()), nil
}

// Vessel reads a vessel (reference data) by id, or by IMO number (seven
// digits): /v2/vessels/{id} and the SDK's getVesselByImo send either.
func (r *Resolver) Vessel(ctx context.Context, p *model.Principal, id string, plan *load.Plan) (*model.Vessel, error) {
	if validID(id) {
		return get(ctx, p, func(l *load.Loaders) *load.Loader[*model.Vessel] { return l.VesselByID }, "vessel", id, plan)
	}
	_, l, err := principal(ctx, p)
	if err != nil {
		return nil, err
	}
	if !sevenDigits(id) {
		return nil, model.NotFound("vessel")
	}
	v, err := r.DB.VesselByIMO(ctx, id)
	if err != nil {
		return nil, err
	}
	l.VesselByID.Prime(v.ID, v)
	return v, nil
}

// FuturePositionsQuery narrows a vessel's future positions: to the calls
// up to the port PortID (when given), starting at a position (when given,
// else the vessel's last known one).
type FuturePositionsQuery struct {
	VesselID            string
	PortID              string
	Latitude, Longitude *float64
	Now                 time.Time // zero: time.Now
}

// VesselFuturePositions reads a vessel and where it is going: its start
// (the given coordinates or its last known position) followed by the
// ports of its future calls that the ACCOUNT's transport events plan or
// estimate, in time order, each an estimated position. Another account's
// events are never read, so two accounts may see different futures of
// one vessel.
func (r *Resolver) VesselFuturePositions(ctx context.Context, p *model.Principal, q FuturePositionsQuery) (*model.Vessel, []model.VesselPosition, error) {
	p, _, err := principal(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	v, err := r.Vessel(ctx, p, q.VesselID, nil)
	if err != nil {
		return nil, nil, err
	}
	now := q.Now
	if now.IsZero() {
		now = time.Now()
	}
	calls, err := r.DB.VesselFuturePortCalls(ctx, p.AccountID, v.ID, now)
	if err != nil {
		return nil, nil, err
	}
	out := []model.VesselPosition{}
	switch {
	case q.Latitude != nil && q.Longitude != nil:
		out = append(out, model.VesselPosition{Latitude: *q.Latitude, Longitude: *q.Longitude, Timestamp: now, Estimated: false})
	case v.Latitude != nil && v.Longitude != nil:
		at := now
		if v.PositionTimestamp != nil {
			at = *v.PositionTimestamp
		}
		out = append(out, model.VesselPosition{Latitude: *v.Latitude, Longitude: *v.Longitude, Heading: v.NavigationalHeadingDegrees, Timestamp: at})
	}
	for _, c := range calls {
		if c.Latitude == nil || c.Longitude == nil || c.EventAt == nil {
			continue
		}
		out = append(out, model.VesselPosition{Latitude: *c.Latitude, Longitude: *c.Longitude, Timestamp: *c.EventAt, Estimated: true})
		if q.PortID != "" && c.PortID == q.PortID {
			break
		}
	}
	return v, out, nil
}

// sevenDigits: the form of an IMO number (carriers' numbers are kept even
// when their check digit is wrong, so it is not checked here).
func sevenDigits(s string) bool {
	if len(s) != 7 {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
