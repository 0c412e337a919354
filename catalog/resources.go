package catalog

import (
	"context"

	"shipgraph/db"
	"shipgraph/model"
)

// The catalogue: every resource type and every relationship, declared once.
// Resources give their GraphQL type, JSON:API type, Go type (from the id
// function), id and read by id; relationships their Rel slot, GraphQL
// field, JSON:API member, target type(s) with key column, key and read,
// and cardinality. Relationships are listed in the order /v2 shows them.

// The batch reads of the store, one per loader (load.Loaders has a field of
// each name).
var (
	AccountByID                = tenantByID("AccountByID", (*db.DB).AccountsByIDs, func(x *model.Account) string { return x.ID })
	UserByID                   = tenantByID("UserByID", (*db.DB).UsersByIDs, func(x *model.User) string { return x.ID })
	PortByID                   = sharedByID("PortByID", (*db.DB).PortsByIDs, func(x *model.Port) string { return x.ID })
	MetroAreaByID              = sharedByID("MetroAreaByID", (*db.DB).MetroAreasByIDs, func(x *model.MetroArea) string { return x.ID })
	TerminalByID               = sharedByID("TerminalByID", (*db.DB).TerminalsByIDs, func(x *model.Terminal) string { return x.ID })
	RailTerminalByID           = sharedByID("RailTerminalByID", (*db.DB).RailTerminalsByIDs, func(x *model.RailTerminal) string { return x.ID })
	ShipmentByID               = tenantByID("ShipmentByID", (*db.DB).ShipmentsByIDs, func(x *model.Shipment) string { return x.ID })
	ContainerByID              = tenantByID("ContainerByID", (*db.DB).ContainersByIDs, func(x *model.Container) string { return x.ID })
	DocumentByID               = tenantByID("DocumentByID", (*db.DB).DocumentsByIDs, func(x *model.Document) string { return x.ID })
	EmailSubmissionByID        = tenantByID("EmailSubmissionByID", (*db.DB).EmailSubmissionsByIDs, func(x *model.EmailSubmission) string { return x.ID })
	DocumentRepresentationByID = tenantByID("DocumentRepresentationByID", (*db.DB).DocumentRepresentationsByIDs, func(x *model.DocumentRepresentation) string { return x.ID })
	DefinitionByID             = tenantByID("DefinitionByID", (*db.DB).CustomFieldDefinitionsByIDs, func(x *model.CustomFieldDefinition) string { return x.ID })

	ContainersByShipmentID       = byParentBatch("ContainersByShipmentID", db.ContainersByShipment, func(x *model.Container) string { return x.ShipmentID })
	ContainerIDsByShipment       = byLink("ContainerIDsByShipment", (*db.DB).ContainerIDsByShipmentIDs)
	ShipmentsByDocumentID        = byLinkBatch("ShipmentsByDocumentID", db.ShipmentsByDocument)
	ContainersByDocumentID       = byLinkBatch("ContainersByDocumentID", db.ContainersByDocument)
	DocumentsByShipmentID        = byLink("DocumentsByShipmentID", (*db.DB).DocumentsByShipmentIDs)
	DocumentsByContainerID       = byLink("DocumentsByContainerID", (*db.DB).DocumentsByContainerIDs)
	DocumentsByEmailSubmissionID = byLink("DocumentsByEmailSubmissionID", (*db.DB).DocumentsByEmailSubmissionIDs)
	OptionsByDefinitionID        = byParent("OptionsByDefinitionID", (*db.DB).CustomFieldOptionsByDefinitionIDs, func(x *model.CustomFieldOption) string { return x.DefinitionID })
	CustomFieldsByEntityID       = byParentBatch("CustomFieldsByEntityID", db.CustomFieldsByEntity, func(x *model.CustomField) string { return x.EntityID })

	// Webhooks. A notification's reference object is read from
	// the notification's row (db.WebhookEventsByIDs), one read per type.
	WebhookByID               = tenantByID("WebhookByID", (*db.DB).WebhooksByIDs, func(x *model.Webhook) string { return x.ID })
	WebhookNotificationByID   = tenantByID("WebhookNotificationByID", (*db.DB).WebhookNotificationsByIDs, func(x *model.WebhookNotification) string { return x.ID })
	ContainerUpdatedEventByID = tenantByID("ContainerUpdatedEventByID", eventRead(func(e *model.WebhookEvent) *model.ContainerUpdatedEvent {
		return &model.ContainerUpdatedEvent{WebhookEvent: *e}
	}), func(x *model.ContainerUpdatedEvent) string { return x.ID })
	TransportEventByID = tenantByID("TransportEventByID", transportEventObjects, func(x *model.TransportEvent) string { return x.ID })
	EstimatedEventByID = tenantByID("EstimatedEventByID", eventRead(func(e *model.WebhookEvent) *model.EstimatedEvent { return &model.EstimatedEvent{WebhookEvent: *e} }), func(x *model.EstimatedEvent) string { return x.ID })
	// Tracking requests (migration 00013): records of their own.
	TrackingRequestByID = tenantByID("TrackingRequestByID", (*db.DB).TrackingRequestsByIDs, func(x *model.TrackingRequest) string { return x.ID })
	// Parties (migration 00019): the customers of shipments and
	// tracking requests.
	PartyByID                    = tenantByID("PartyByID", (*db.DB).PartiesByIDs, func(x *model.Party) string { return x.ID })
	TrackingRequestsByShipmentID = byParent("TrackingRequestsByShipmentID", (*db.DB).TrackingRequestsByShipmentIDs, func(x *model.TrackingRequest) string { return deref(x.ShipmentID) })

	// The journey (migration 00013): a container's transport events (the
	// records, as the one transport_event type) and raw events, and the
	// vessels they name (reference data).
	VesselByID                   = sharedByID("VesselByID", (*db.DB).VesselsByIDs, func(x *model.Vessel) string { return x.ID })
	TransportEventsByContainerID = byParent("TransportEventsByContainerID", transportEventsByContainerIDs, func(x *model.TransportEvent) string { return *x.ContainerID })
	RawEventsByContainerID       = byParent("RawEventsByContainerID", (*db.DB).RawEventsByContainerIDs, func(x *model.RawEvent) string { return x.ContainerID })
	TransportEventIDsByContainer = byLink("TransportEventIDsByContainer", (*db.DB).TransportEventIDsByContainerIDs)
	RawEventIDsByContainer       = byLink("RawEventIDsByContainer", (*db.DB).RawEventIDsByContainerIDs)
)

// transportEventsByContainerIDs reads the transport event records of
// containers, as transport events.
func transportEventsByContainerIDs(s *db.DB, ctx context.Context, acct string, ids []string) ([]*model.TransportEvent, error) {
	rows, err := s.TransportEventsByContainerIDs(ctx, acct, ids)
	out := make([]*model.TransportEvent, len(rows))
	for i, r := range rows {
		out[i] = model.TransportEventOf(r)
	}
	return out, err
}

// transportEventObjects reads transport_event reference objects by id:
// the records (a container.transport.* notification's object is the
// transport event record it was raised from, under the record's id), then,
// for ids that name no record, the frozen objects of notifications raised
// from a container's row (the pickup and availability events), whose ids
// are model.WebhookEventID of the notification's. The second read runs
// only when the first left ids unfound.
func transportEventObjects(s *db.DB, ctx context.Context, acct string, ids []string) ([]*model.TransportEvent, error) {
	out, err := transportEventsByIDs(s, ctx, acct, ids)
	if err != nil || len(out) == len(ids) {
		return out, err
	}
	found := make(map[string]bool, len(out))
	for _, e := range out {
		found[e.ID] = true
	}
	var rest []string
	for _, id := range ids {
		if !found[id] {
			rest = append(rest, id)
		}
	}
	frozen, err := eventRead(model.FrozenTransportEvent)(s, ctx, acct, rest)
	return append(out, frozen...), err
}

// transportEventsByIDs reads transport event records by id, as transport
// events.
func transportEventsByIDs(s *db.DB, ctx context.Context, acct string, ids []string) ([]*model.TransportEvent, error) {
	rows, err := s.TransportEventsByIDs(ctx, acct, ids)
	out := make([]*model.TransportEvent, len(rows))
	for i, r := range rows {
		out[i] = model.TransportEventOf(r)
	}
	return out, err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// eventRead is the read of one type of reference object.
func eventRead[T any](wrap func(*model.WebhookEvent) T) func(*db.DB, context.Context, string, []string) ([]T, error) {
	return func(s *db.DB, ctx context.Context, acct string, ids []string) ([]T, error) {
		rows, err := s.WebhookEventsByIDs(ctx, acct, ids)
		out := make([]T, len(rows))
		for i, r := range rows {
			out[i] = wrap(r)
		}
		return out, err
	}
}

// The resource types.
var (
	Account                = resource("Account", "account", func(x *model.Account) string { return x.ID }, AccountByID)
	User                   = resource("User", "user", func(x *model.User) string { return x.ID }, UserByID)
	Port                   = resource("Port", "port", func(x *model.Port) string { return x.ID }, PortByID)
	MetroArea              = resource("MetroArea", "metro_area", func(x *model.MetroArea) string { return x.ID }, MetroAreaByID)
	Terminal               = resource("Terminal", "terminal", func(x *model.Terminal) string { return x.ID }, TerminalByID)
	RailTerminal           = resource("RailTerminal", "rail_terminal", func(x *model.RailTerminal) string { return x.ID }, RailTerminalByID)
	ShippingLine           = resource("ShippingLine", "shipping_line", func(x *model.ShippingLine) string { return x.ID }, nil)
	Shipment               = resource("Shipment", "shipment", func(x *model.Shipment) string { return x.ID }, ShipmentByID)
	Container              = resource("Container", "container", func(x *model.Container) string { return x.ID }, ContainerByID)
	Document               = resource("Document", "document", func(x *model.Document) string { return x.ID }, DocumentByID)
	EmailSubmission        = resource("EmailSubmission", "email_submission", func(x *model.EmailSubmission) string { return x.ID }, EmailSubmissionByID)
	DocumentRepresentation = resource("DocumentRepresentation", "document_representation", func(x *model.DocumentRepresentation) string { return x.ID }, DocumentRepresentationByID)
	CustomField            = resource("CustomField", "custom_field", func(x *model.CustomField) string { return x.ID }, nil)
	CustomFieldDefinition  = resource("CustomFieldDefinition", "custom_field_definition", func(x *model.CustomFieldDefinition) string { return x.ID }, DefinitionByID)
	CustomFieldOption      = resource("CustomFieldOption", "custom_field_option", func(x *model.CustomFieldOption) string { return x.ID }, nil)

	Webhook               = resource("Webhook", "webhook", func(x *model.Webhook) string { return x.ID }, WebhookByID)
	WebhookNotification   = resource("WebhookNotification", "webhook_notification", func(x *model.WebhookNotification) string { return x.ID }, WebhookNotificationByID)
	ContainerUpdatedEvent = resource("ContainerUpdatedEvent", model.ContainerUpdatedEventType, func(x *model.ContainerUpdatedEvent) string { return x.ID }, ContainerUpdatedEventByID)
	TransportEvent        = resource("TransportEvent", model.TransportEventType, func(x *model.TransportEvent) string { return x.ID }, TransportEventByID)
	EstimatedEvent        = resource("EstimatedEvent", model.EstimatedEventType, func(x *model.EstimatedEvent) string { return x.ID }, EstimatedEventByID)
	TrackingRequest       = resource("TrackingRequest", model.TrackingRequestType, func(x *model.TrackingRequest) string { return x.ID }, TrackingRequestByID)
	Party                 = resource("Party", model.PartyType, func(x *model.Party) string { return x.ID }, PartyByID)

	Vessel   = resource("Vessel", model.VesselType, func(x *model.Vessel) string { return x.ID }, VesselByID)
	RawEvent = resource("RawEvent", model.RawEventType, func(x *model.RawEvent) string { return x.ID }, nil)
)

// The relationships, by owner.
func init() {
	// ------------------------------------------------------------ Shipment
	Shipment.rel(&Rel{GraphQL: "destination", JSONAPI: "destination", Targets: []*Target{
		one(MetroArea, "destination_metro_area_id", func(s *model.Shipment) *string { return s.DestinationMetroAreaID },
			"DestinationMetroArea", func(s *model.Shipment) **model.MetroArea { return &s.Rel.DestinationMetroArea }, MetroAreaByID),
		one(Port, "destination_port_id", func(s *model.Shipment) *string { return unless(s.DestinationMetroAreaID, s.DestinationPortID) },
			"DestinationPort", func(s *model.Shipment) **model.Port { return &s.Rel.DestinationPort }, PortByID),
	}})
	Shipment.rel(&Rel{GraphQL: "portOfLading", JSONAPI: "port_of_lading", Targets: []*Target{
		one(Port, "port_of_lading_id", func(s *model.Shipment) *string { return s.PortOfLadingID },
			"PortOfLading", func(s *model.Shipment) **model.Port { return &s.Rel.PortOfLading }, PortByID),
	}})
	Shipment.rel(&Rel{GraphQL: "portOfDischarge", JSONAPI: "port_of_discharge", Targets: []*Target{
		one(Port, "port_of_discharge_id", func(s *model.Shipment) *string { return s.PortOfDischargeID },
			"PortOfDischarge", func(s *model.Shipment) **model.Port { return &s.Rel.PortOfDischarge }, PortByID),
	}})
	Shipment.rel(&Rel{GraphQL: "containers", JSONAPI: "containers", Many: true, Targets: []*Target{
		many(Container, func(s *model.Shipment) string { return s.ID },
			"Containers", func(s *model.Shipment) *[]*model.Container { return &s.Rel.Containers }, ContainersByShipmentID),
	}, Linkage: Shipment.rel(&Rel{Internal: "containerIDs", Many: true, Targets: []*Target{
		// The ids of the containers alone, for /v2 linkage: no container
		// is read whole for it.
		// A /v2 read gathers them in the shipment's own row.
		heldIn(manyIDs(Container, func(s *model.Shipment) string { return s.ID },
			"ContainerIDs", func(s *model.Shipment) *[]string { return &s.Rel.ContainerIDs }, ContainerIDsByShipment),
			"container_ids", func(s *model.Shipment) []string { return s.HeldContainerIDs }),
	}})})
	Shipment.rel(&Rel{GraphQL: "podTerminal", JSONAPI: "pod_terminal", Targets: []*Target{
		one(Terminal, "pod_terminal_id", func(s *model.Shipment) *string { return s.PodTerminalID },
			"PodTerminal", func(s *model.Shipment) **model.Terminal { return &s.Rel.PodTerminal }, TerminalByID),
	}})
	Shipment.rel(&Rel{GraphQL: "destinationTerminal", JSONAPI: "destination_terminal", Targets: []*Target{
		one(RailTerminal, "destination_rail_terminal_id", func(s *model.Shipment) *string { return s.DestinationRailTerminalID },
			"DestinationRailTerminal", func(s *model.Shipment) **model.RailTerminal { return &s.Rel.DestinationRailTerminal }, RailTerminalByID),
		one(Terminal, "destination_terminal_id", func(s *model.Shipment) *string { return unless(s.DestinationRailTerminalID, s.DestinationTerminalID) },
			"DestinationTerminal", func(s *model.Shipment) **model.Terminal { return &s.Rel.DestinationTerminal }, TerminalByID),
	}})
	Shipment.rel(&Rel{GraphQL: "lineTrackingStoppedByUser", JSONAPI: "line_tracking_stopped_by_user", Targets: []*Target{
		one(User, "line_tracking_stopped_by_user_id", func(s *model.Shipment) *string { return s.LineTrackingStoppedByUserID },
			"LineTrackingStoppedByUser", func(s *model.Shipment) **model.User { return &s.Rel.LineTrackingStoppedByUser }, UserByID),
	}})
	shipmentCustomFields := Shipment.rel(&Rel{GraphQL: "customFields", Many: true, Targets: []*Target{
		many(CustomField, func(s *model.Shipment) string { return s.ID },
			"CustomFields", func(s *model.Shipment) *[]*model.CustomField { return &s.Rel.CustomFields }, CustomFieldsByEntityID),
	}})
	// customField(apiSlug) picks one of the custom fields.
	Shipment.rel(&Rel{GraphQL: "customField", Via: shipmentCustomFields, Targets: shipmentCustomFields.Targets})
	Shipment.rel(&Rel{GraphQL: "documents", Many: true, Targets: []*Target{
		many(Document, func(s *model.Shipment) string { return s.ID },
			"Documents", func(s *model.Shipment) *[]*model.Document { return &s.Rel.Documents }, DocumentsByShipmentID),
	}})
	// The customer (a party): GraphQL only, as the OpenAPI's shipment has
	// no customer relationship (its customer_name attribute stays).
	Shipment.rel(&Rel{GraphQL: "customer", Targets: []*Target{
		one(Party, "customer_id", func(s *model.Shipment) *string { return s.CustomerID },
			"Customer", func(s *model.Shipment) **model.Party { return &s.Rel.Customer }, PartyByID),
	}})
	Shipment.rel(&Rel{GraphQL: "trackingRequests", Many: true, Targets: []*Target{
		many(TrackingRequest, func(s *model.Shipment) string { return s.ID },
			"TrackingRequests", func(s *model.Shipment) *[]*model.TrackingRequest { return &s.Rel.TrackingRequests }, TrackingRequestsByShipmentID),
	}})

	// ------------------------------------------------------------ Container
	Container.rel(&Rel{GraphQL: "shipment", JSONAPI: "shipment", Targets: []*Target{
		one(Shipment, "shipment_id", func(c *model.Container) *string { return &c.ShipmentID },
			"Shipment", func(c *model.Container) **model.Shipment { return &c.Rel.Shipment }, ShipmentByID),
	}})
	Container.rel(&Rel{GraphQL: "podTerminal", JSONAPI: "pod_terminal", Targets: []*Target{
		one(Terminal, "pod_terminal_id", func(c *model.Container) *string { return c.PodTerminalID },
			"PodTerminal", func(c *model.Container) **model.Terminal { return &c.Rel.PodTerminal }, TerminalByID),
	}})
	Container.rel(&Rel{GraphQL: "pickupFacility", JSONAPI: "pickup_facility", Targets: []*Target{
		one(Terminal, "pickup_facility_id", func(c *model.Container) *string { return c.PickupFacilityID },
			"PickupFacility", func(c *model.Container) **model.Terminal { return &c.Rel.PickupFacility }, TerminalByID),
	}})
	// The journey, in time order.
	Container.rel(&Rel{GraphQL: "transportEvents", JSONAPI: "transport_events", Many: true, Targets: []*Target{
		many(TransportEvent, func(c *model.Container) string { return c.ID },
			"TransportEvents", func(c *model.Container) *[]*model.TransportEvent { return &c.Rel.TransportEvents }, TransportEventsByContainerID),
	}, Linkage: Container.rel(&Rel{Internal: "transportEventIDs", Many: true, Targets: []*Target{
		heldIn(manyIDs(TransportEvent, func(c *model.Container) string { return c.ID },
			"TransportEventIDs", func(c *model.Container) *[]string { return &c.Rel.TransportEventIDs }, TransportEventIDsByContainer),
			"transport_event_ids", func(c *model.Container) []string { return c.HeldTransportEventIDs }),
	}})})
	Container.rel(&Rel{GraphQL: "rawEvents", JSONAPI: "raw_events", Many: true, Targets: []*Target{
		many(RawEvent, func(c *model.Container) string { return c.ID },
			"RawEvents", func(c *model.Container) *[]*model.RawEvent { return &c.Rel.RawEvents }, RawEventsByContainerID),
	}, Linkage: Container.rel(&Rel{Internal: "rawEventIDs", Many: true, Targets: []*Target{
		heldIn(manyIDs(RawEvent, func(c *model.Container) string { return c.ID },
			"RawEventIDs", func(c *model.Container) *[]string { return &c.Rel.RawEventIDs }, RawEventIDsByContainer),
			"raw_event_ids", func(c *model.Container) []string { return c.HeldRawEventIDs }),
	}})})
	Container.rel(&Rel{GraphQL: "customFields", Many: true, Targets: []*Target{
		many(CustomField, func(c *model.Container) string { return c.ID },
			"CustomFields", func(c *model.Container) *[]*model.CustomField { return &c.Rel.CustomFields }, CustomFieldsByEntityID),
	}})
	Container.rel(&Rel{GraphQL: "documents", Many: true, Targets: []*Target{
		many(Document, func(c *model.Container) string { return c.ID },
			"Documents", func(c *model.Container) *[]*model.Document { return &c.Rel.Documents }, DocumentsByContainerID),
	}})

	// ------------------------------------------------------------ Document
	Document.rel(&Rel{GraphQL: "account", JSONAPI: "account", Targets: []*Target{
		one(Account, "account_id", func(d *model.Document) *string { return &d.AccountID },
			"Account", func(d *model.Document) **model.Account { return &d.Rel.Account }, AccountByID),
	}})
	Document.rel(&Rel{GraphQL: "user", JSONAPI: "user", Targets: []*Target{
		one(User, "user_id", func(d *model.Document) *string { return d.UserID },
			"User", func(d *model.Document) **model.User { return &d.Rel.User }, UserByID),
	}})
	Document.rel(&Rel{GraphQL: "emailSubmission", JSONAPI: "email_submission", Targets: []*Target{
		one(EmailSubmission, "email_submission_id", func(d *model.Document) *string { return d.EmailSubmissionID },
			"EmailSubmission", func(d *model.Document) **model.EmailSubmission { return &d.Rel.EmailSubmission }, EmailSubmissionByID),
	}})
	Document.rel(&Rel{GraphQL: "lastDocumentRepresentation", JSONAPI: "last_document_representation", Aliases: []string{"current_extraction"}, Targets: []*Target{
		one(DocumentRepresentation, "last_document_representation_id", func(d *model.Document) *string { return d.LastDocumentRepresentationID },
			"LastDocumentRepresentation", func(d *model.Document) **model.DocumentRepresentation { return &d.Rel.LastDocumentRepresentation }, DocumentRepresentationByID),
	}})
	Document.rel(&Rel{GraphQL: "shipments", JSONAPI: "shipments", Many: true, Targets: []*Target{
		many(Shipment, func(d *model.Document) string { return d.ID },
			"Shipments", func(d *model.Document) *[]*model.Shipment { return &d.Rel.Shipments }, ShipmentsByDocumentID),
	}})
	Document.rel(&Rel{GraphQL: "cargos", JSONAPI: "cargos", Many: true, Targets: []*Target{
		many(Container, func(d *model.Document) string { return d.ID },
			"Cargos", func(d *model.Document) *[]*model.Container { return &d.Rel.Cargos }, ContainersByDocumentID),
	}})

	// ------------------------------------------------------------ EmailSubmission
	EmailSubmission.rel(&Rel{GraphQL: "account", JSONAPI: "account", Targets: []*Target{
		one(Account, "account_id", func(e *model.EmailSubmission) *string { return &e.AccountID },
			"Account", func(e *model.EmailSubmission) **model.Account { return &e.Rel.Account }, AccountByID),
	}})
	EmailSubmission.rel(&Rel{GraphQL: "user", JSONAPI: "user", Targets: []*Target{
		one(User, "user_id", func(e *model.EmailSubmission) *string { return e.UserID },
			"User", func(e *model.EmailSubmission) **model.User { return &e.Rel.User }, UserByID),
	}})
	EmailSubmission.rel(&Rel{GraphQL: "documents", JSONAPI: "documents", Many: true, Targets: []*Target{
		many(Document, func(e *model.EmailSubmission) string { return e.ID },
			"Documents", func(e *model.EmailSubmission) *[]*model.Document { return &e.Rel.Documents }, DocumentsByEmailSubmissionID),
	}})

	// ------------------------------------------------------------ terminals
	Terminal.rel(&Rel{GraphQL: "port", JSONAPI: "port", Targets: []*Target{
		one(Port, "port_id", func(t *model.Terminal) *string { return &t.PortID },
			"Port", func(t *model.Terminal) **model.Port { return &t.Rel.Port }, PortByID),
	}})
	RailTerminal.rel(&Rel{GraphQL: "port", JSONAPI: "port", Targets: []*Target{
		one(Port, "port_id", func(t *model.RailTerminal) *string { return t.PortID },
			"Port", func(t *model.RailTerminal) **model.Port { return &t.Rel.Port }, PortByID),
	}})
	RailTerminal.rel(&Rel{GraphQL: "metroArea", JSONAPI: "metro_area", Targets: []*Target{
		one(MetroArea, "metro_area_id", func(t *model.RailTerminal) *string { return t.MetroAreaID },
			"MetroArea", func(t *model.RailTerminal) **model.MetroArea { return &t.Rel.MetroArea }, MetroAreaByID),
	}})

	// ------------------------------------------------------------ custom fields
	CustomField.rel(&Rel{GraphQL: "entity", JSONAPI: "entity", Targets: []*Target{
		one(Container, "container_id", func(c *model.CustomField) *string { return c.ContainerID },
			"Container", func(c *model.CustomField) **model.Container { return &c.Rel.Container }, ContainerByID),
		one(Shipment, "shipment_id", func(c *model.CustomField) *string { return unless(c.ContainerID, c.ShipmentID) },
			"Shipment", func(c *model.CustomField) **model.Shipment { return &c.Rel.Shipment }, ShipmentByID),
		one(TrackingRequest, "tracking_request_id", func(c *model.CustomField) *string { return c.TrackingRequestID },
			"TrackingRequest", func(c *model.CustomField) **model.TrackingRequest { return &c.Rel.TrackingRequest }, TrackingRequestByID),
	}})
	CustomField.rel(&Rel{GraphQL: "definition", JSONAPI: "definition", Targets: []*Target{
		one(CustomFieldDefinition, "definition_id", func(c *model.CustomField) *string { return &c.DefinitionID },
			"Definition", func(c *model.CustomField) **model.CustomFieldDefinition { return &c.Rel.Definition }, DefinitionByID),
	}})
	// The user a reference field names, for its display value:
	// no field or member of its own; the plans add it where displayValue
	// or display_value is shown.
	CustomField.rel(&Rel{Internal: "referencedUser", Targets: []*Target{
		one(User, "value", (*model.CustomField).ReferencedUserID,
			"ReferencedUser", func(c *model.CustomField) **model.User { return &c.Rel.ReferencedUser }, UserByID),
	}})
	CustomFieldDefinition.rel(&Rel{GraphQL: "options", Many: true, Targets: []*Target{
		many(CustomFieldOption, func(d *model.CustomFieldDefinition) string {
			if !d.DataType.HasOptions() {
				return "" // no options to read; the list is empty
			}
			return d.ID
		}, "Options", func(d *model.CustomFieldDefinition) *[]*model.CustomFieldOption { return &d.Rel.Options }, OptionsByDefinitionID),
	}})
	CustomFieldOption.rel(&Rel{GraphQL: "definition", Targets: []*Target{
		one(CustomFieldDefinition, "definition_id", func(o *model.CustomFieldOption) *string { return &o.DefinitionID },
			"Definition", func(o *model.CustomFieldOption) **model.CustomFieldDefinition { return &o.Rel.Definition }, DefinitionByID),
	}})

	// ------------------------------------------------------------ webhooks
	WebhookNotification.rel(&Rel{GraphQL: "webhook", JSONAPI: "webhook", Targets: []*Target{
		one(Webhook, "webhook_id", func(n *model.WebhookNotification) *string { return &n.WebhookID },
			"Webhook", func(n *model.WebhookNotification) **model.Webhook { return &n.Rel.Webhook }, WebhookByID),
	}})
	// The reference object: the event, whose type follows from the
	// notification's event name (model.WebhookEventObjectType).
	WebhookNotification.rel(&Rel{GraphQL: "referenceObject", JSONAPI: "reference_object", Targets: []*Target{
		one(ContainerUpdatedEvent, "event", func(n *model.WebhookNotification) *string { return n.EventKey(model.ContainerUpdatedEventType) },
			"ContainerUpdatedEvent", func(n *model.WebhookNotification) **model.ContainerUpdatedEvent { return &n.Rel.ContainerUpdatedEvent }, ContainerUpdatedEventByID),
		one(TransportEvent, "event", func(n *model.WebhookNotification) *string { return n.EventKey(model.TransportEventType) },
			"TransportEvent", func(n *model.WebhookNotification) **model.TransportEvent { return &n.Rel.TransportEvent }, TransportEventByID),
		one(EstimatedEvent, "event", func(n *model.WebhookNotification) *string { return n.EventKey(model.EstimatedEventType) },
			"EstimatedEvent", func(n *model.WebhookNotification) **model.EstimatedEvent { return &n.Rel.EstimatedEvent }, EstimatedEventByID),
		one(TrackingRequest, "reference_id", func(n *model.WebhookNotification) *string { return n.EventKey(model.TrackingRequestType) },
			"TrackingRequest", func(n *model.WebhookNotification) **model.TrackingRequest { return &n.Rel.TrackingRequest }, TrackingRequestByID),
		one(Document, "reference_id", func(n *model.WebhookNotification) *string { return n.EventKey(model.DocumentObjectType) },
			"Document", func(n *model.WebhookNotification) **model.Document { return &n.Rel.Document }, DocumentByID),
	}})
	ContainerUpdatedEvent.rel(&Rel{GraphQL: "container", JSONAPI: "container", Targets: []*Target{
		one(Container, "container_id", func(e *model.ContainerUpdatedEvent) *string { return e.ContainerID },
			"Container", func(e *model.ContainerUpdatedEvent) **model.Container { return &e.Rel.Container }, ContainerByID),
	}})
	ContainerUpdatedEvent.rel(&Rel{GraphQL: "terminal", JSONAPI: "terminal", Targets: []*Target{
		one(Terminal, "terminal_id", func(e *model.ContainerUpdatedEvent) *string { return e.TerminalID },
			"Terminal", func(e *model.ContainerUpdatedEvent) **model.Terminal { return &e.Rel.Terminal }, TerminalByID),
	}})
	TransportEvent.rel(&Rel{GraphQL: "shipment", JSONAPI: "shipment", Targets: []*Target{
		one(Shipment, "shipment_id", func(e *model.TransportEvent) *string { return e.ShipmentID },
			"Shipment", func(e *model.TransportEvent) **model.Shipment { return &e.Rel.Shipment }, ShipmentByID),
	}})
	// The location is the shipment's port of discharge (the events
	// Shipgraph raises happen there); never a metro area.
	TransportEvent.rel(&Rel{GraphQL: "location", JSONAPI: "location", Targets: []*Target{
		one(MetroArea, "port_id", func(*model.TransportEvent) *string { return nil },
			"LocationMetroArea", func(e *model.TransportEvent) **model.MetroArea { return &e.Rel.LocationMetroArea }, MetroAreaByID),
		one(Port, "port_id", func(e *model.TransportEvent) *string { return e.PortID },
			"LocationPort", func(e *model.TransportEvent) **model.Port { return &e.Rel.LocationPort }, PortByID),
	}})
	TransportEvent.rel(&Rel{GraphQL: "vessel", JSONAPI: "vessel", Targets: []*Target{
		one(Vessel, "vessel_id", func(e *model.TransportEvent) *string { return e.VesselID },
			"Vessel", func(e *model.TransportEvent) **model.Vessel { return &e.Rel.Vessel }, VesselByID),
	}})
	// A rail terminal when the event names one, else the terminal.
	TransportEvent.rel(&Rel{GraphQL: "terminal", JSONAPI: "terminal", Targets: []*Target{
		one(RailTerminal, "rail_terminal_id", func(e *model.TransportEvent) *string { return e.RailTerminalID },
			"TerminalRail", func(e *model.TransportEvent) **model.RailTerminal { return &e.Rel.TerminalRail }, RailTerminalByID),
		one(Terminal, "terminal_id", func(e *model.TransportEvent) *string { return unless(e.RailTerminalID, e.TerminalID) },
			"Terminal", func(e *model.TransportEvent) **model.Terminal { return &e.Rel.Terminal }, TerminalByID),
	}})
	TransportEvent.rel(&Rel{GraphQL: "container", JSONAPI: "container", Targets: []*Target{
		one(Container, "container_id", func(e *model.TransportEvent) *string { return e.ContainerID },
			"Container", func(e *model.TransportEvent) **model.Container { return &e.Rel.Container }, ContainerByID),
	}})
	RawEvent.rel(&Rel{GraphQL: "location", JSONAPI: "location", Targets: []*Target{
		one(Port, "port_id", func(e *model.RawEvent) *string { return e.PortID },
			"LocationPort", func(e *model.RawEvent) **model.Port { return &e.Rel.LocationPort }, PortByID),
	}})
	RawEvent.rel(&Rel{GraphQL: "vessel", JSONAPI: "vessel", Targets: []*Target{
		one(Vessel, "vessel_id", func(e *model.RawEvent) *string { return e.VesselID },
			"Vessel", func(e *model.RawEvent) **model.Vessel { return &e.Rel.Vessel }, VesselByID),
	}})
	EstimatedEvent.rel(&Rel{GraphQL: "shipment", JSONAPI: "shipment", Targets: []*Target{
		one(Shipment, "shipment_id", func(e *model.EstimatedEvent) *string { return e.ShipmentID },
			"Shipment", func(e *model.EstimatedEvent) **model.Shipment { return &e.Rel.Shipment }, ShipmentByID),
	}})
	EstimatedEvent.rel(&Rel{GraphQL: "port", JSONAPI: "port", Targets: []*Target{
		one(Port, "port_id", func(e *model.EstimatedEvent) *string { return e.PortID },
			"Port", func(e *model.EstimatedEvent) **model.Port { return &e.Rel.Port }, PortByID),
	}})
	EstimatedEvent.rel(&Rel{JSONAPI: "vessel"}) // no vessel records: null
	TrackingRequest.rel(&Rel{GraphQL: "trackedObject", JSONAPI: "tracked_object", Targets: []*Target{
		one(Shipment, "shipment_id", func(t *model.TrackingRequest) *string { return t.ShipmentID },
			"Shipment", func(t *model.TrackingRequest) **model.Shipment { return &t.Rel.Shipment }, ShipmentByID),
	}})
	TrackingRequest.rel(&Rel{GraphQL: "customer", JSONAPI: "customer", Targets: []*Target{
		one(Party, "customer_id", func(t *model.TrackingRequest) *string { return t.CustomerID },
			"Customer", func(t *model.TrackingRequest) **model.Party { return &t.Rel.Customer }, PartyByID),
	}})
	trackingRequestCustomFields := TrackingRequest.rel(&Rel{GraphQL: "customFields", Many: true, Targets: []*Target{
		many(CustomField, func(t *model.TrackingRequest) string { return t.ID },
			"CustomFields", func(t *model.TrackingRequest) *[]*model.CustomField { return &t.Rel.CustomFields }, CustomFieldsByEntityID),
	}})
	// customField(apiSlug) picks one of the custom fields.
	TrackingRequest.rel(&Rel{GraphQL: "customField", Via: trackingRequestCustomFields, Targets: trackingRequestCustomFields.Targets})
}
