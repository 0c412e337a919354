package model

import (
	"database/sql/driver"
	"io"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"
)

// Webhooks: an account's endpoints, the notifications raised for
// them, and the events a notification is about. docs/webhooks.md has the
// rules.

// WebhookHeader is one extra request header a webhook sends.
type WebhookHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// WebhookHeaders are a webhook's extra headers: a jsonb array of
// {"name","value"}.
type WebhookHeaders []WebhookHeader

func (h *WebhookHeaders) Scan(src any) error {
	*h = WebhookHeaders{}
	if emptyArray(src) {
		return nil
	}
	return scanJSON(src, h)
}

func (h WebhookHeaders) Value() (driver.Value, error) { return valueJSON(h, "[]") }

// Webhook is an endpoint notifications are sent to. Secret is set only
// where it is shown: in the answer to the create and to a rotation; the
// store's reads never select it.
type Webhook struct {
	ID         string         `db:"id"`
	AccountID  string         `db:"account_id"`
	URL        string         `db:"url" jsonapi:"url"`
	Active     bool           `db:"active" jsonapi:"active"`
	EventList  pq.StringArray `db:"events" jsonapi:"events,nonnull"`
	Secret     *string        `db:"-" jsonapi:"secret"`
	HeaderList WebhookHeaders `db:"headers" jsonapi:"headers,nonnull"`
	CreatedAt  time.Time      `db:"created_at"`
	UpdatedAt  time.Time      `db:"updated_at"`
}

// Events are the events the webhook receives, never nil.
func (w *Webhook) Events() []string { return orEmpty([]string(w.EventList)) }

// Headers are its extra headers, never nil.
func (w *Webhook) Headers() []*WebhookHeader { return ptrs(w.HeaderList) }

// The delivery states of a notification.
const (
	DeliveryPending   WebhookDeliveryStatus = "pending"
	DeliverySucceeded WebhookDeliveryStatus = "succeeded"
	DeliveryFailed    WebhookDeliveryStatus = "failed"
)

// DeliveryStatuses are the delivery states, in order.
var DeliveryStatuses = newEnumSet("WebhookDeliveryStatus", "pending", "succeeded", "failed")

// WebhookDeliveryStatus is a notification's delivery state.
type WebhookDeliveryStatus string

func (e WebhookDeliveryStatus) MarshalGQL(w io.Writer) { DeliveryStatuses.marshal(w, string(e)) }
func (e *WebhookDeliveryStatus) UnmarshalGQL(v any) error {
	s, err := DeliveryStatuses.unmarshal(v)
	*e = WebhookDeliveryStatus(s)
	return err
}

// WebhookInput is a new webhook (GraphQL's input; /v2 builds the same).
type WebhookInput struct {
	URL     string                `json:"url"`
	Active  *bool                 `json:"active"`
	Events  []string              `json:"events"`
	Headers []*WebhookHeaderInput `json:"headers"`
}

// WebhookPatch changes a webhook; nil members are unchanged.
type WebhookPatch struct {
	URL     *string               `json:"url"`
	Active  *bool                 `json:"active"`
	Events  []string              `json:"events"`
	Headers []*WebhookHeaderInput `json:"headers"`
}

// WebhookHeaderInput is one header of an input.
type WebhookHeaderInput struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// WebhookNotificationFilter narrows the notification list.
type WebhookNotificationFilter struct {
	WebhookID      *string                `json:"webhookId"`
	DeliveryStatus *WebhookDeliveryStatus `json:"deliveryStatus"`
}

type WebhookConnection struct {
	Edges    []*WebhookEdge
	Nodes    []*Webhook
	PageInfo *PageInfo
}

type WebhookEdge struct {
	Cursor string
	Node   *Webhook
}

type WebhookNotificationConnection struct {
	Edges    []*WebhookNotificationEdge
	Nodes    []*WebhookNotification
	PageInfo *PageInfo
	Filter   WebhookNotificationFilter
}

type WebhookNotificationEdge struct {
	Cursor string
	Node   *WebhookNotification
}

// WebhookNotification is one event raised for one webhook. ReferenceType
// and ReferenceID name the record the event is about ("container" or
// "shipment"); Payload holds the attributes of its reference object
// (the event), frozen when it was raised. Its /v2 attributes are its
// jsonapi-tagged fields, in field order (tools/attrgen).
type WebhookNotification struct {
	ID             string                `db:"id"`
	AccountID      string                `db:"account_id"`
	WebhookID      string                `db:"webhook_id"`
	Event          string                `db:"event" jsonapi:"event"`
	ReferenceType  string                `db:"reference_type"`
	ReferenceID    string                `db:"reference_id"`
	DeliveryStatus WebhookDeliveryStatus `db:"delivery_status" jsonapi:"delivery_status"`
	Attempts       int                   `db:"attempts"`
	DeliveredAt    *time.Time            `db:"delivered_at"`
	CreatedAt      time.Time             `db:"created_at" jsonapi:"created_at"`
	// RefState is what a tracking request event froze of its request
	// (its status, and failed_reason when the event's update changed it):
	// the reference object renders these as they were at the event. Nil
	// for other events.
	RefState JSON `db:"ref_state"`

	Rel WebhookNotificationRel `db:"-"`
}

// EventKey is the id of the notification's reference object when it is of
// JSON:API type typ, nil otherwise (the key of each target of the
// reference_object relationship).
func (n *WebhookNotification) EventKey(typ string) *string {
	if WebhookEventObjectType(n.Event) != typ {
		return nil
	}
	var id string
	switch {
	case typ == DocumentObjectType:
		id = n.ReferenceID // raised from the document's own row
	case typ == TrackingRequestType && n.ReferenceType == TrackingRequestType:
		id = n.ReferenceID // raised from the request's own row
	case typ == TransportEventType && n.ReferenceType == TransportEventType:
		id = n.ReferenceID // raised from a transport event record: the record itself
	case typ == TrackingRequestType:
		// Raised from its shipment's row before requests were records: the
		// backfilled request of the shipment (migration 00013).
		id = TrackingRequestID(n.ReferenceID)
	default:
		id = WebhookEventID(n.ID)
	}
	return &id
}

// WebhookEvent is what the reference object of a notification holds,
// whichever its type: the notification's event and frozen attributes, and
// the keys of its related records, read when it is rendered (the container
// or shipment the event is about, its shipment, terminal and port).
type WebhookEvent struct {
	ID             string  `db:"-"` // WebhookEventID(NotificationID)
	NotificationID string  `db:"id"`
	AccountID      string  `db:"account_id"`
	Event          string  `db:"event"`
	Payload        JSON    `db:"payload"`
	ContainerID    *string `db:"container_id"`
	ShipmentID     *string `db:"shipment_id"`
	TerminalID     *string `db:"terminal_id"`
	PortID         *string `db:"port_id"`
	// The keys only a notification raised from a transport event record
	// has (its rail terminal and vessel).
	RailTerminalID *string   `db:"rail_terminal_id"`
	VesselID       *string   `db:"vessel_id"`
	CreatedAt      time.Time `db:"created_at"`
}

// Attributes are the frozen attributes, {} when none were kept.
func (e *WebhookEvent) Attributes() JSON {
	if len(e.Payload) == 0 || string(e.Payload) == "null" {
		return JSON("{}")
	}
	return e.Payload
}

// The three reference object types: one Go type each, as the catalogue
// keys resources by Go type.
type (
	ContainerUpdatedEvent struct {
		WebhookEvent
		Rel ContainerUpdatedEventRel `db:"-"`
	}
	// TransportEvent is the one transport_event type: a record of the
	// container's journey (TransportEventOf, Record set) or the frozen
	// reference object of a notification raised from a container's
	// change (pickup LFD, availability), whose typed fields are read from
	// the frozen attributes (docs/decisions.md, "Journeys").
	TransportEvent struct {
		WebhookEvent
		TransportEventFields
		Rel TransportEventRel `db:"-"`
	}
	EstimatedEvent struct {
		WebhookEvent
		Rel EstimatedEventRel `db:"-"`
	}
)

// The JSON:API types of the reference objects.
const (
	ContainerUpdatedEventType = "container_updated_event"
	// DocumentObjectType is the JSON:API type of documents, the reference
	// object of the document.* events.
	DocumentObjectType = "document"
	TransportEventType = "transport_event"
	EstimatedEventType = "estimated_event"
)

// WebhookEventCategory is a group of the events Shipgraph raises
// (/v2/webhooks/events).
type WebhookEventCategory struct {
	ID     string
	Name   string
	Events []WebhookEventInfo
}

// WebhookEventInfo is one event a webhook may subscribe to (json names:
// /v2's webhook_event_category events).
type WebhookEventInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// ObjectType is the JSON:API type of its notifications' reference
	// object.
	ObjectType string `json:"-"`
}

// WebhookEventCategories are the events Shipgraph can raise: those of the
// public catalogue its data can tell, by category.
var WebhookEventCategories = []WebhookEventCategory{
	{ID: "container-events", Name: "Container Events", Events: []WebhookEventInfo{
		{"container.created", "A container was added to a tracked shipment.", ContainerUpdatedEventType},
		{"container.updated", "Attributes of a container changed; the changeset has each one's old and new value.", ContainerUpdatedEventType},
		{"container.pod_terminal_changed", "The container's terminal at the port of discharge changed.", ContainerUpdatedEventType},
		{"container.pickup_lfd.changed", "The last free day for pickup changed.", TransportEventType},
		{"container.pickup_lfd_line.changed", "The shipping line's last free day changed.", TransportEventType},
		{"container.pickup_lfd_terminal.changed", "The terminal's last free day changed.", TransportEventType},
		{"container.pickup_lfd_rail.changed", "The rail last free day changed.", TransportEventType},
		{"container.pickup_appointment.changed", "The pickup appointment changed.", TransportEventType},
	}},
	{ID: "container-transport-events", Name: "Container Transport Events", Events: append([]WebhookEventInfo{
		{"container.transport.available", "The container became available for pickup.", TransportEventType},
		{"container.transport.not_available", "The container is no longer available for pickup.", TransportEventType},
		{"container.transport.delivered", "The container was delivered.", TransportEventType},
	}, journeyEvents...)},
	{ID: "shipment-events", Name: "Shipment Events", Events: []WebhookEventInfo{
		{"shipment.estimated.arrival", "The estimated arrival at the port of discharge moved.", EstimatedEventType},
	}},
	{ID: "tracking-request-events", Name: "Tracking Request Events", Events: []WebhookEventInfo{
		{"tracking_request.succeeded", "A tracking request succeeded: its shipment is now tracked (status created).", TrackingRequestType},
		{"tracking_request.failed", "A tracking request failed (status failed; failed_reason says why).", TrackingRequestType},
		{"tracking_request.awaiting_manifest", "The shipping line knows the number but has no manifest yet (status awaiting_manifest).", TrackingRequestType},
		{"tracking_request.tracking_stopped", "Tracking stopped: by a user (stop_tracking), or at the shipping line (status tracking_stopped).", TrackingRequestType},
	}},
	{ID: "document-events", Name: "Document Events", Events: []WebhookEventInfo{
		{"document.extracted", "A document's text was extracted, classified and linked (on upload, or after reextract).", DocumentObjectType},
		{"document.extraction_failed", "A document's text could not be extracted (no embedded text: OCR needs a model Shipgraph does not have; a format it does not read; an unreadable file).", DocumentObjectType},
	}},
}

// journeyEvents are the milestones of a container's journey: each raised
// when a transport event record of that name is added (webhook/events.go).
var journeyEvents = []WebhookEventInfo{
	{"container.transport.empty_out", "The empty container was picked up for loading.", TransportEventType},
	{"container.transport.full_in", "The loaded container entered the port of lading.", TransportEventType},
	{"container.transport.vessel_loaded", "The container was loaded on the vessel at the port of lading.", TransportEventType},
	{"container.transport.vessel_departed", "The vessel left the port of lading.", TransportEventType},
	{"container.transport.estimated.vessel_departed", "The estimated departure from the port of lading changed.", TransportEventType},
	{"container.transport.transshipment_arrived", "The vessel arrived at a transshipment port.", TransportEventType},
	{"container.transport.transshipment_discharged", "The container was discharged at a transshipment port.", TransportEventType},
	{"container.transport.transshipment_loaded", "The container was loaded at a transshipment port.", TransportEventType},
	{"container.transport.transshipment_departed", "The vessel left a transshipment port.", TransportEventType},
	{"container.transport.feeder_arrived", "The feeder vessel arrived.", TransportEventType},
	{"container.transport.feeder_discharged", "The container was discharged from a feeder vessel.", TransportEventType},
	{"container.transport.feeder_loaded", "The container was loaded on a feeder vessel.", TransportEventType},
	{"container.transport.feeder_departed", "The feeder vessel departed.", TransportEventType},
	{"container.transport.vessel_arrived", "The vessel arrived at the port of discharge.", TransportEventType},
	{"container.transport.estimated.vessel_arrived", "The estimated arrival at the port of discharge changed.", TransportEventType},
	{"container.transport.vessel_berthed", "The vessel berthed at the port of discharge.", TransportEventType},
	{"container.transport.vessel_discharged", "The container was discharged at the port of discharge.", TransportEventType},
	{"container.transport.rail_loaded", "The container was loaded on rail.", TransportEventType},
	{"container.transport.rail_departed", "The train departed.", TransportEventType},
	{"container.transport.rail_arrived", "The train arrived.", TransportEventType},
	{"container.transport.rail_unloaded", "The container was unloaded from rail.", TransportEventType},
	{"container.transport.arrived_at_inland_destination", "The container arrived at its inland destination.", TransportEventType},
	{"container.transport.estimated.arrived_at_inland_destination", "The estimated arrival at the inland destination changed.", TransportEventType},
	{"container.transport.full_out", "The loaded container left the terminal.", TransportEventType},
	{"container.transport.empty_in", "The empty container was returned.", TransportEventType},
}

var webhookEventTypes = func() map[string]string {
	m := map[string]string{}
	for _, c := range WebhookEventCategories {
		for _, e := range c.Events {
			m[e.Name] = e.ObjectType
		}
	}
	return m
}()

// ValidWebhookEvent reports whether Shipgraph raises the event name.
func ValidWebhookEvent(name string) bool { return webhookEventTypes[name] != "" }

// WebhookEventObjectType is the JSON:API type of the reference object of
// a notification of event ("" for an event Shipgraph does not raise).
func WebhookEventObjectType(event string) string { return webhookEventTypes[event] }

// eventIDMask turns a notification id into its reference object's id and
// back (XOR is its own inverse). It leaves the UUID's version and variant
// bits alone, so the id is a UUID of the same kind, and differs from the
// notification's: ids stay unique across types.
var eventIDMask = [16]byte{0x5a, 0x3c, 0x96, 0x0f, 0xa5, 0xc3, 0x0e, 0x69, 0x1e, 0x78, 0xb4, 0xd2, 0x2d, 0x4b, 0x87, 0xe1}

// WebhookEventID is the id of the reference object of notification id, and
// the notification id of a reference object's id. An id that is not a UUID
// is returned as is.
func WebhookEventID(id string) string { return maskID(id, &eventIDMask) }

// maskID XORs the UUID id with mask (its own inverse); an id that is not
// a UUID is returned as is. The masks keep the version and variant bits.
func maskID(id string, mask *[16]byte) string {
	if len(id) != 36 {
		return id
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return id
	}
	for i := range u {
		u[i] ^= mask[i]
	}
	return u.String()
}

// WebhookTrial is the outcome of a one-time test delivery (POST
// /v2/webhooks/trigger): what was sent and what the receiver answered, in
// the public document's shape. Nil pointers are JSON nulls.
type WebhookTrial struct {
	URL             string            `json:"url"`
	Succeeded       bool              `json:"succeeded"`
	Error           *string           `json:"error"`
	StatusCode      *int              `json:"status_code"`
	RequestHeaders  map[string]string `json:"request_headers"`
	RequestBody     string            `json:"request_body"`
	ResponseHeaders map[string]string `json:"response_headers"`
	ResponseBody    *string           `json:"response_body"`
}
