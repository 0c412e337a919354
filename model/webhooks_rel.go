package model

// The relationships of webhook notifications and of their reference
// objects (catalog/resources.go declares them).

type WebhookNotificationRel struct {
	Loaded
	Webhook               *Webhook
	ContainerUpdatedEvent *ContainerUpdatedEvent
	TransportEvent        *TransportEvent
	EstimatedEvent        *EstimatedEvent
	TrackingRequest       *TrackingRequest
	Document              *Document
}

type ContainerUpdatedEventRel struct {
	Loaded
	Container *Container
	Terminal  *Terminal
}

type TransportEventRel struct {
	Loaded
	Shipment          *Shipment
	LocationPort      *Port
	LocationMetroArea *MetroArea
	Terminal          *Terminal
	TerminalRail      *RailTerminal
	Container         *Container
	Vessel            *Vessel
}

type EstimatedEventRel struct {
	Loaded
	Shipment *Shipment
	Port     *Port
}

func (n *WebhookNotification) Loads() *Loaded   { return &n.Rel.Loaded }
func (e *ContainerUpdatedEvent) Loads() *Loaded { return &e.Rel.Loaded }
func (e *TransportEvent) Loads() *Loaded        { return &e.Rel.Loaded }
func (e *EstimatedEvent) Loads() *Loaded        { return &e.Rel.Loaded }

// WebhookReferenceObject is the GraphQL union of the reference objects.
func (ContainerUpdatedEvent) IsWebhookReferenceObject() {}
func (TransportEvent) IsWebhookReferenceObject()        {}
func (EstimatedEvent) IsWebhookReferenceObject()        {}
func (Document) IsWebhookReferenceObject()              {}

// Webhook is the notification's webhook (null when the plan did not load
// it).
func (n *WebhookNotification) Webhook() *Webhook { return n.Rel.Webhook }

// ReferenceObject is the event the notification is about, of whichever
// type applies.
func (n *WebhookNotification) ReferenceObject() WebhookReferenceObject {
	switch {
	case n.Rel.ContainerUpdatedEvent != nil:
		return n.Rel.ContainerUpdatedEvent
	case n.Rel.TransportEvent != nil:
		return n.Rel.TransportEvent
	case n.Rel.EstimatedEvent != nil:
		return n.Rel.EstimatedEvent
	case n.Rel.TrackingRequest != nil:
		return n.Rel.TrackingRequest
	case n.Rel.Document != nil:
		return n.Rel.Document
	}
	return nil
}

func (e *ContainerUpdatedEvent) Container() *Container { return e.Rel.Container }
func (e *ContainerUpdatedEvent) Terminal() *Terminal   { return e.Rel.Terminal }
func (e *TransportEvent) Shipment() *Shipment          { return e.Rel.Shipment }
func (e *TransportEvent) Container() *Container        { return e.Rel.Container }
func (e *TransportEvent) Location() Destination {
	if e.Rel.LocationMetroArea != nil {
		return e.Rel.LocationMetroArea
	}
	if e.Rel.LocationPort != nil {
		return e.Rel.LocationPort
	}
	return nil
}
func (e *TransportEvent) Terminal() DestinationTerminal {
	if e.Rel.TerminalRail != nil {
		return e.Rel.TerminalRail
	}
	if e.Rel.Terminal != nil {
		return e.Rel.Terminal
	}
	return nil
}
func (e *EstimatedEvent) Shipment() *Shipment { return e.Rel.Shipment }
func (e *EstimatedEvent) Port() *Port         { return e.Rel.Port }
