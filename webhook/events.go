package webhook

import (
	"encoding/json"
	"slices"
	"time"
)

// Change is one change_log row as the engine needs it: the columns an
// UPDATE changed, with their previous (Old) and new (New) values.
type Change struct {
	ID        int64
	AccountID string
	Type      string // record type: "container", "shipment", …
	RecordID  string
	Op        string // INSERT, UPDATE, DELETE
	Parent    string
	Changed   []string
	Old, New  map[string]any
	LoggedAt  time.Time
}

// The events Shipgraph raises (docs/webhooks.md, "Delivery").
const (
	EventContainerCreated         = "container.created"
	EventContainerUpdated         = "container.updated"
	EventPodTerminalChanged       = "container.pod_terminal_changed"
	EventPickupLFDChanged         = "container.pickup_lfd.changed"
	EventPickupLFDLineChanged     = "container.pickup_lfd_line.changed"
	EventPickupLFDTerminalChanged = "container.pickup_lfd_terminal.changed"
	EventPickupLFDRailChanged     = "container.pickup_lfd_rail.changed"
	EventPickupAppointmentChanged = "container.pickup_appointment.changed"
	EventTransportAvailable       = "container.transport.available"
	EventTransportNotAvailable    = "container.transport.not_available"
	EventTransportDelivered       = "container.transport.delivered"
	EventShipmentEstimatedArrival = "shipment.estimated.arrival"
	EventTrackingSucceeded        = "tracking_request.succeeded"
	EventTrackingFailed           = "tracking_request.failed"
	EventTrackingAwaitingManifest = "tracking_request.awaiting_manifest"
	EventTrackingStopped          = "tracking_request.tracking_stopped"
	EventDocumentExtracted        = "document.extracted"
	EventDocumentExtractionFailed = "document.extraction_failed"
)

// JourneyEvents are the container.transport.* milestones of a container's
// journey: an INSERT of a transport event record raises the one its event
// names (deriveTransportEvent).
var JourneyEvents = []string{
	"container.transport.empty_out", "container.transport.full_in", "container.transport.vessel_loaded",
	"container.transport.vessel_departed", "container.transport.estimated.vessel_departed",
	"container.transport.transshipment_arrived", "container.transport.transshipment_discharged",
	"container.transport.transshipment_loaded", "container.transport.transshipment_departed",
	"container.transport.feeder_arrived", "container.transport.feeder_discharged",
	"container.transport.feeder_loaded", "container.transport.feeder_departed",
	"container.transport.vessel_arrived", "container.transport.estimated.vessel_arrived",
	"container.transport.vessel_berthed", "container.transport.vessel_discharged",
	"container.transport.rail_loaded", "container.transport.rail_departed", "container.transport.rail_arrived",
	"container.transport.rail_unloaded", "container.transport.arrived_at_inland_destination",
	"container.transport.estimated.arrived_at_inland_destination",
	"container.transport.full_out", "container.transport.empty_in",
}

// Events lists every event Derive can raise, in a stable order.
var Events = append([]string{
	EventContainerCreated, EventContainerUpdated, EventPodTerminalChanged,
	EventPickupLFDChanged, EventPickupLFDLineChanged, EventPickupLFDTerminalChanged,
	EventPickupLFDRailChanged, EventPickupAppointmentChanged,
	EventTransportAvailable, EventTransportNotAvailable, EventTransportDelivered,
	EventShipmentEstimatedArrival, EventTrackingSucceeded, EventTrackingFailed,
	EventTrackingAwaitingManifest, EventTrackingStopped,
	EventDocumentExtracted, EventDocumentExtractionFailed,
}, JourneyEvents...)

// trackingEvents: a tracking request whose status becomes the key raises
// the event (pending raises none: it is where every request starts).
var trackingEvents = map[string]string{
	"created":           EventTrackingSucceeded,
	"failed":            EventTrackingFailed,
	"awaiting_manifest": EventTrackingAwaitingManifest,
	"tracking_stopped":  EventTrackingStopped,
}

// documentEvents: a document whose extraction_status becomes the key
// raises the event (pending raises none: a job will run).
var documentEvents = map[string]string{
	"extracted": EventDocumentExtracted,
	"failed":    EventDocumentExtractionFailed,
}

// Event is one notification-to-be: the public event name, the record it is
// about and the frozen attributes of its reference object
// (webhook_notifications.payload, migration 00009), by the object's type:
//
//   - container_updated_event (container.created, container.updated,
//     container.pod_terminal_changed): {"changeset": {"<attribute>": [old,
//     new], …}, "timestamp", "data_source": "terminal"}; the changeset names
//     the attributes with their /v2 names (pod_terminal_id is
//     "pod_terminal", as in the public changeset); container.created's is
//     empty;
//   - transport_event (the pickup LFD and appointment events, the
//     available / not_available / delivered transitions): {"event",
//     "timestamp", "timezone", "location_locode", "voyage_number",
//     "data_source", "created_at"};
//   - estimated_event (shipment.estimated.arrival): {"event",
//     "estimated_timestamp" (the new POD ETA), "timezone",
//     "location_locode", "voyage_number", "data_source": "shipping_line",
//     "created_at"};
//   - tracking_request (tracking_request.succeeded, .failed,
//     .awaiting_manifest, .tracking_stopped): {"status", and
//     "failed_reason" when the update changed it}: the reference object is
//     the tracking request record, read when the notification is rendered
//     (model.TrackingRequest), with these attributes as of the event.
//
// timestamp and created_at are when the change was logged (its commit,
// to the log's precision).
type Event struct {
	Name          string
	ReferenceType string // "container", "shipment", "tracking_request" or "transport_event": the record the event is about
	ReferenceID   string
	Payload       json.RawMessage
}

// updatedAttrs are the container columns whose change raises
// container.updated, with their public changeset names: the list the
// public container_updated_event documents as alertable.
var updatedAttrs = [...]struct{ col, attr string }{
	{"available_for_pickup", "available_for_pickup"},
	{"fees_at_pod_terminal", "fees_at_pod_terminal"},
	{"holds_at_pod_terminal", "holds_at_pod_terminal"},
	{"pickup_appointment_at", "pickup_appointment_at"},
	{"pickup_lfd", "pickup_lfd"},
	{"pod_terminal_id", "pod_terminal"},
}

// columnEvents are the container columns that each raise an event of their
// own when they change.
var columnEvents = [...]struct{ col, attr, event string }{
	{"pod_terminal_id", "pod_terminal", EventPodTerminalChanged},
	{"pickup_lfd", "pickup_lfd", EventPickupLFDChanged},
	{"pickup_lfd_line", "pickup_lfd_line", EventPickupLFDLineChanged},
	{"pickup_lfd_terminal", "pickup_lfd_terminal", EventPickupLFDTerminalChanged},
	{"pickup_lfd_rail", "pickup_lfd_rail", EventPickupLFDRailChanged},
	{"pickup_appointment_at", "pickup_appointment_at", EventPickupAppointmentChanged},
}

// statusEvents: a container whose current_status becomes the key raises
// the event, whatever it was before (docs/webhooks.md).
var statusEvents = map[string]string{
	"available":     EventTransportAvailable,
	"not_available": EventTransportNotAvailable,
	"delivered":     EventTransportDelivered,
}

// Derive returns the events one logged change raises, in a stable order
// (the order of Events). It is pure: the log row holds everything needed.
// DELETEs, custom fields, documents and definitions raise nothing; an
// INSERT of a container raises container.created only (whatever its
// status); an UPDATE raises one event per rule that its changed columns
// meet. The tracking_request.* events are raised from the requests' rows:
// an UPDATE whose status becomes created (succeeded), failed,
// awaiting_manifest or tracking_stopped raises that event; a request is
// inserted pending, which raises nothing (the log keeps no values of an
// INSERT). Stopping a shipment's tracking (stop_tracking, or the shipping
// line's stop written by any system) stops its requests in the same
// transaction (a trigger, migration 00014), which raises tracking_stopped;
// a resume makes them created again, which raises succeeded.
func Derive(c *Change) []Event {
	switch c.Type {
	case "container":
		switch c.Op {
		case "INSERT":
			return []Event{{Name: EventContainerCreated, ReferenceType: "container", ReferenceID: c.RecordID,
				Payload: updatedPayload(c, nil)}}
		case "UPDATE":
			return deriveContainerUpdate(c)
		}
	case "transport_event":
		if c.Op == "INSERT" {
			return deriveTransportEvent(c)
		}
	case "shipment":
		if c.Op == "UPDATE" && changed(c, "pod_eta_at") {
			return []Event{{Name: EventShipmentEstimatedArrival, ReferenceType: "shipment", ReferenceID: c.RecordID,
				Payload: estimatedPayload(c)}}
		}
	case "document":
		// A document job's outcome (docproc), from the row's
		// extraction_status; the reference object is the document.
		if c.Op == "UPDATE" && changed(c, "extraction_status") {
			to, _ := c.New["extraction_status"].(string)
			if ev, ok := documentEvents[to]; ok {
				return []Event{{Name: ev, ReferenceType: "document", ReferenceID: c.RecordID, Payload: noPayload}}
			}
		}
	case "tracking_request":
		if c.Op == "UPDATE" && changed(c, "status") {
			to, _ := c.New["status"].(string)
			if ev, ok := trackingEvents[to]; ok {
				return []Event{{Name: ev, ReferenceType: "tracking_request", ReferenceID: c.RecordID, Payload: trackingPayload(c, to)}}
			}
		}
	}
	return nil
}

// deriveTransportEvent: an INSERT of a transport event record raises the
// event its row names (container.transport.vessel_departed, …), with the
// record as reference object (reference type transport_event) and its
// attributes as inserted (migration 00015 logs them). An event of a name
// Shipgraph does not list raises nothing; the availability and delivery
// events are raised by the container's status, not again by a record.
func deriveTransportEvent(c *Change) []Event {
	name, _ := c.New["event"].(string)
	if !slices.Contains(JourneyEvents, name) {
		return nil
	}
	str := func(k string) *string {
		if v, ok := c.New[k].(string); ok {
			return &v
		}
		return nil
	}
	source := "shipping_line"
	if v := str("data_source"); v != nil {
		source = *v
	}
	created := stamp(c)
	if v := str("created_at"); v != nil {
		created, _ = publicValue(*v).(string)
	}
	var at any
	if v := str("event_at"); v != nil {
		at = publicValue(*v)
	}
	b, _ := json.Marshal(struct {
		CreatedAt      string  `json:"created_at"`
		DataSource     string  `json:"data_source"`
		Event          string  `json:"event"`
		LocationLocode *string `json:"location_locode"`
		Timestamp      any     `json:"timestamp"`
		Timezone       *string `json:"timezone"`
		VoyageNumber   *string `json:"voyage_number"`
	}{created, source, name, str("location_locode"), at, str("timezone"), str("voyage_number")})
	return []Event{{Name: name, ReferenceType: "transport_event", ReferenceID: c.RecordID, Payload: b}}
}

// trackingPayload is what a tracking request event freezes of its
// request: the status it moved to and, when the same update changed it,
// its failed_reason. The reference object is the request record read when
// the notification is rendered, with these as they were at the event (a
// request that succeeds and stops in one poll says created in its
// succeeded notification, not tracking_stopped).
func trackingPayload(c *Change, status string) json.RawMessage {
	state := map[string]any{"status": status}
	if r, ok := c.New["failed_reason"]; ok && changed(c, "failed_reason") {
		state["failed_reason"] = r
	}
	b, _ := json.Marshal(state)
	return b
}

// noPayload is the frozen attributes of a reference object read when it is
// rendered (a document): none.
var noPayload = json.RawMessage(`{}`)

type pair struct{ col, attr string }

func deriveContainerUpdate(c *Change) []Event {
	var out []Event
	var set []pair
	for _, a := range updatedAttrs {
		if changed(c, a.col) {
			set = append(set, pair{a.col, a.attr})
		}
	}
	if len(set) > 0 {
		out = append(out, Event{Name: EventContainerUpdated, ReferenceType: "container", ReferenceID: c.RecordID,
			Payload: updatedPayload(c, set)})
	}
	for _, e := range columnEvents {
		if changed(c, e.col) {
			p := transportPayload(c, e.event, "terminal")
			switch e.event {
			case EventPodTerminalChanged:
				p = updatedPayload(c, []pair{{e.col, e.attr}})
			case EventPickupLFDLineChanged:
				p = transportPayload(c, e.event, "shipping_line")
			}
			out = append(out, Event{Name: e.event, ReferenceType: "container", ReferenceID: c.RecordID, Payload: p})
		}
	}
	if changed(c, "current_status") {
		to, _ := c.New["current_status"].(string)
		from, _ := c.Old["current_status"].(string)
		if ev, ok := statusEvents[to]; ok && from != to {
			out = append(out, Event{Name: ev, ReferenceType: "container", ReferenceID: c.RecordID,
				Payload: transportPayload(c, ev, "terminal")})
		}
	}
	return out
}

// changed: the UPDATE changed col (it is in Changed and its value differs;
// a log that lists a column without values still counts).
func changed(c *Change, col string) bool {
	if !slices.Contains(c.Changed, col) {
		return false
	}
	o, okO := c.Old[col]
	n, okN := c.New[col]
	if okO && okN {
		return !jsonEqual(o, n)
	}
	return true
}

func jsonEqual(a, b any) bool {
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ab) == string(bb)
}

// updatedPayload is a container_updated_event's attributes: the
// changeset of set.
func updatedPayload(c *Change, set []pair) json.RawMessage {
	cs := make(map[string][2]any, len(set))
	for _, p := range set {
		cs[p.attr] = [2]any{publicValue(c.Old[p.col]), publicValue(c.New[p.col])}
	}
	b, _ := json.Marshal(struct {
		Changeset  map[string][2]any `json:"changeset"`
		Timestamp  string            `json:"timestamp"`
		DataSource string            `json:"data_source"`
	}{cs, stamp(c), "terminal"})
	return b
}

// transportPayload is a transport_event's attributes. The log knows no
// location, voyage or time zone of the change: they are null.
func transportPayload(c *Change, event, source string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Event          string  `json:"event"`
		Timestamp      string  `json:"timestamp"`
		Timezone       *string `json:"timezone"`
		LocationLocode *string `json:"location_locode"`
		VoyageNumber   *string `json:"voyage_number"`
		DataSource     string  `json:"data_source"`
		CreatedAt      string  `json:"created_at"`
	}{Event: event, Timestamp: stamp(c), DataSource: source, CreatedAt: stamp(c)})
	return b
}

// estimatedPayload is a shipment.estimated.arrival's estimated_event: the
// new POD ETA (null when it was cleared).
func estimatedPayload(c *Change) json.RawMessage {
	b, _ := json.Marshal(struct {
		Event              string  `json:"event"`
		EstimatedTimestamp any     `json:"estimated_timestamp"`
		Timezone           *string `json:"timezone"`
		LocationLocode     *string `json:"location_locode"`
		VoyageNumber       *string `json:"voyage_number"`
		DataSource         string  `json:"data_source"`
		CreatedAt          string  `json:"created_at"`
	}{Event: EventShipmentEstimatedArrival, EstimatedTimestamp: publicValue(c.New["pod_eta_at"]),
		DataSource: "shipping_line", CreatedAt: stamp(c)})
	return b
}

func stamp(c *Change) string { return c.LoggedAt.UTC().Format(time.RFC3339Nano) }

// publicValue writes timestamps the way /v2 does (UTC, RFC 3339): the log
// holds them as PostgreSQL's to_jsonb wrote them ("…+00:00" in the
// session's zone).
func publicValue(v any) any {
	s, ok := v.(string)
	if !ok || len(s) < 20 || s[4] != '-' || s[10] != 'T' {
		return v
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return v
	}
	return t.UTC().Format(time.RFC3339Nano)
}
