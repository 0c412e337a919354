package model

import "time"

// The journey of a container (migration 00013): what carriers
// published about it (raw events, kept as received), the public milestones
// derived from them (transport event records) and the vessels met in them.
// The carrier connectors write them (carrier/, through db); both APIs read
// them through the catalogue.

// VesselType is the JSON:API type of vessels.
const VesselType = "vessel"

// RawEventType is the JSON:API type of raw events.
const RawEventType = "raw_event"

// Vessel is a ship met in carriers' events: reference data, shared by every
// account, keyed by its IMO number.
type Vessel struct {
	ID string `db:"id"`

	// The /v2 attributes, in the order /v2 writes them (jsonapi tags: tools/attrgen).
	Name                       string     `db:"name" jsonapi:"name"`
	IMO                        *string    `db:"imo" jsonapi:"imo"`
	MMSI                       *string    `db:"mmsi" jsonapi:"mmsi"`
	Latitude                   *float64   `db:"latitude" jsonapi:"latitude"`
	Longitude                  *float64   `db:"longitude" jsonapi:"longitude"`
	NauticalSpeedKnots         *float64   `db:"nautical_speed_knots" jsonapi:"nautical_speed_knots"`
	NavigationalHeadingDegrees *float64   `db:"navigational_heading_degrees" jsonapi:"navigational_heading_degrees"`
	PositionTimestamp          *time.Time `db:"position_timestamp" jsonapi:"position_timestamp"`

	// Not /v2 attributes: keys, relationships' ids and bookkeeping.
	CallSign  *string   `db:"call_sign"`
	Flag      *string   `db:"flag"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

// RawEvent is one event a carrier published about one container, kept once
// per (account, container, SCAC, carrier event id). Event is the public raw
// event name (vessel_loaded, …); OriginalEvent the carrier's own codes
// (DCSA: "EQUIPMENT LOAD ACT"); Payload the carrier's event as received.
type RawEvent struct {
	ID             string     `db:"id"`
	AccountID      string     `db:"account_id"`
	ContainerID    string     `db:"container_id"`
	ShipmentID     string     `db:"shipment_id"`
	Scac           string     `db:"scac"`
	CarrierEventID string     `db:"carrier_event_id"`
	Event          string     `db:"event"`
	OriginalEvent  *string    `db:"original_event"`
	Estimated      bool       `db:"estimated"`
	EventAt        *time.Time `db:"event_at"`
	Timezone       *string    `db:"timezone"`
	LocationName   *string    `db:"location_name"`
	LocationLocode *string    `db:"location_locode"`
	PortID         *string    `db:"port_id"`
	VesselID       *string    `db:"vessel_id"`
	VesselName     *string    `db:"vessel_name"`
	VesselIMO      *string    `db:"vessel_imo"`
	VoyageNumber   *string    `db:"voyage_number"`
	Position       int        `db:"position"`
	Payload        JSON       `db:"payload"`
	CreatedAt      time.Time  `db:"created_at"`

	Rel RawEventRel `db:"-"`
}

// TransportEventRecord is a public milestone of a container
// (container.transport.vessel_departed, …), derived from one raw event and
// keyed like it. It is what /v2/containers/{id}/transport_events lists and
// what the container.transport.* webhook notifications refer to.
type TransportEventRecord struct {
	ID             string     `db:"id"`
	AccountID      string     `db:"account_id"`
	ContainerID    string     `db:"container_id"`
	ShipmentID     string     `db:"shipment_id"`
	RawEventID     *string    `db:"raw_event_id"`
	Scac           string     `db:"scac"`
	CarrierEventID string     `db:"carrier_event_id"`
	Event          string     `db:"event"`
	EventAt        *time.Time `db:"event_at"`
	Timezone       *string    `db:"timezone"`
	LocationLocode *string    `db:"location_locode"`
	PortID         *string    `db:"port_id"`
	TerminalID     *string    `db:"terminal_id"`
	RailTerminalID *string    `db:"rail_terminal_id"`
	VesselID       *string    `db:"vessel_id"`
	VoyageNumber   *string    `db:"voyage_number"`
	DataSource     string     `db:"data_source"`
	CreatedAt      time.Time  `db:"created_at"`
}
