package model

import (
	"encoding/json"
	"time"
)

// The relationships and accessors of the journey's records (catalog/
// resources.go declares them), and the one transport_event type.

// TransportEventFields are a transport event's typed attributes.
type TransportEventFields struct {
	// Record is set when the event is a transport_events row.
	Record         bool       `db:"-"`
	EventAt        *time.Time `db:"-"`
	Timezone       *string    `db:"-"`
	LocationLocode *string    `db:"-"`
	VoyageNumber   *string    `db:"-"`
	DataSource     string     `db:"-"`
	Scac           string     `db:"-"` // the carrier that published it (records only)
}

// TransportEventOf is the transport event of a record.
func TransportEventOf(r *TransportEventRecord) *TransportEvent {
	containerID, shipmentID := r.ContainerID, r.ShipmentID
	return &TransportEvent{
		WebhookEvent: WebhookEvent{ID: r.ID, AccountID: r.AccountID, Event: r.Event, ContainerID: &containerID,
			ShipmentID: &shipmentID, TerminalID: r.TerminalID, PortID: r.PortID, RailTerminalID: r.RailTerminalID,
			VesselID: r.VesselID, CreatedAt: r.CreatedAt},
		TransportEventFields: TransportEventFields{Record: true, EventAt: r.EventAt, Timezone: r.Timezone,
			LocationLocode: r.LocationLocode, VoyageNumber: r.VoyageNumber, DataSource: r.DataSource, Scac: r.Scac},
	}
}

// FrozenTransportEvent is the transport event of a notification's frozen
// reference object: its typed fields are read from the frozen attributes
// (what they lack is null).
func FrozenTransportEvent(e *WebhookEvent) *TransportEvent {
	t := &TransportEvent{WebhookEvent: *e}
	var a struct {
		Timestamp      *time.Time `json:"timestamp"`
		Timezone       *string    `json:"timezone"`
		LocationLocode *string    `json:"location_locode"`
		VoyageNumber   *string    `json:"voyage_number"`
		DataSource     string     `json:"data_source"`
	}
	if json.Unmarshal(e.Attributes(), &a) == nil {
		t.EventAt, t.Timezone, t.LocationLocode, t.VoyageNumber, t.DataSource = a.Timestamp, a.Timezone, a.LocationLocode, a.VoyageNumber, a.DataSource
	}
	return t
}

// Timestamp is when the event happened (or is planned), null when unknown.
func (e *TransportEvent) Timestamp() *time.Time { return e.EventAt }
func (e *TransportEvent) Vessel() *Vessel       { return e.Rel.Vessel }

// RawEventRel holds a raw event's relationships.
type RawEventRel struct {
	Loaded
	LocationPort *Port
	Vessel       *Vessel
}

func (e *RawEvent) Loads() *Loaded { return &e.Rel.Loaded }

// Location is the raw event's port, when the carrier's location is one.
func (e *RawEvent) Location() *Port { return e.Rel.LocationPort }
func (e *RawEvent) Vessel() *Vessel { return e.Rel.Vessel }

// Timestamp is when the event happened or, estimated, is expected.
func (e *RawEvent) Timestamp() *time.Time { return e.EventAt }

// TransportEvents are the container's transport events in time order.
func (c *Container) TransportEvents() []*TransportEvent { return orEmpty(c.Rel.TransportEvents) }

// RawEvents are the container's raw events in time order.
func (c *Container) RawEvents() []*RawEvent { return orEmpty(c.Rel.RawEvents) }

// VesselPosition is a position of a vessel: known, or estimated (a future
// port call).
type VesselPosition struct {
	Latitude  float64
	Longitude float64
	Heading   *float64
	Timestamp time.Time
	Estimated bool
}

// Attributes are the event's attributes as /v2 and webhook payloads show
// them: a record's own, or the frozen ones of a notification.
func (e *TransportEvent) Attributes() JSON {
	if !e.Record {
		return e.WebhookEvent.Attributes()
	}
	utc := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		s := t.UTC().Format(time.RFC3339)
		return &s
	}
	b, err := json.Marshal(struct {
		CreatedAt      *string `json:"created_at"`
		DataSource     string  `json:"data_source"`
		Event          string  `json:"event"`
		LocationLocode *string `json:"location_locode"`
		Timestamp      *string `json:"timestamp"`
		Timezone       *string `json:"timezone"`
		VoyageNumber   *string `json:"voyage_number"`
	}{utc(&e.CreatedAt), e.DataSource, e.Event, e.LocationLocode, utc(e.EventAt), e.Timezone, e.VoyageNumber})
	if err != nil {
		return JSON("{}")
	}
	return JSON(b)
}
