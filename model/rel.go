package model

// Relationships are attached to the records by the load plan (load/plan.go)
// before a response is written: one statement per relationship and level
// reads them for a whole page, and the plan stores what it read in the
// record's Rel, in the slot the catalogue (catalog/resources.go) names. The GraphQL executor reads them through the methods below,
// which take no context and so need no resolver goroutine per record; /v2
// reads Rel directly. A relationship the plan did not load reads as null
// (to-one) or empty (to-many).

// Loaded records which relationships of one record the plan has attached,
// a bit per relationship, for one generation of the request's loaders (a
// write starts a new one: what was attached before may be stale). Only the
// plan reads and writes it, under the lock of the request's loaders.
type Loaded struct {
	gen  uint32
	bits uint64
}

// Mark sets bit for generation gen and reports whether it was clear before
// (always, for a record last marked in an earlier generation).
func (l *Loaded) Mark(gen uint32, bit uint) bool {
	if l.gen != gen {
		l.gen, l.bits = gen, 0
	}
	mask := uint64(1) << bit
	if l.bits&mask != 0 {
		return false
	}
	l.bits |= mask
	return true
}

// Related is a record with relationships the plan attaches.
type Related interface{ Loads() *Loaded }

type ShipmentRel struct {
	Loaded
	Containers                []*Container
	ContainerIDs              []string // the containers' ids alone (linkage)
	CustomFields              []*CustomField
	Documents                 []*Document
	PortOfLading              *Port
	PortOfDischarge           *Port
	DestinationPort           *Port
	DestinationMetroArea      *MetroArea
	PodTerminal               *Terminal
	DestinationTerminal       *Terminal
	DestinationRailTerminal   *RailTerminal
	LineTrackingStoppedByUser *User
	TrackingRequests          []*TrackingRequest
	Customer                  *Party
}

type ContainerRel struct {
	Loaded
	Shipment       *Shipment
	PodTerminal    *Terminal
	PickupFacility *Terminal
	CustomFields   []*CustomField
	Documents      []*Document
	// The journey (model/journey_rel.go).
	TransportEvents   []*TransportEvent
	RawEvents         []*RawEvent
	TransportEventIDs []string // the events' ids alone (linkage)
	RawEventIDs       []string
}

type EmailSubmissionRel struct {
	Loaded
	Account   *Account
	User      *User
	Documents []*Document
}

type DocumentRel struct {
	Loaded
	Account                    *Account
	User                       *User
	EmailSubmission            *EmailSubmission
	LastDocumentRepresentation *DocumentRepresentation
	Shipments                  []*Shipment
	Cargos                     []*Container
}

type TerminalRel struct {
	Loaded
	Port *Port
}

type RailTerminalRel struct {
	Loaded
	Port      *Port
	MetroArea *MetroArea
}

type CustomFieldRel struct {
	Loaded
	Definition *CustomFieldDefinition
	Shipment   *Shipment  // the entity, when it is a shipment
	Container  *Container // the entity, when it is a container

	TrackingRequest *TrackingRequest // the entity, when it is a tracking request

	// ReferencedUser is the user a reference field's value names (its
	// definition's reference_type is "user"), for its display value.
	ReferencedUser *User
}

type DefinitionRel struct {
	Loaded
	Options []*CustomFieldOption
}

type OptionRel struct {
	Loaded
	Definition *CustomFieldDefinition
}

func (s *Shipment) Loads() *Loaded              { return &s.Rel.Loaded }
func (c *Container) Loads() *Loaded             { return &c.Rel.Loaded }
func (d *Document) Loads() *Loaded              { return &d.Rel.Loaded }
func (e *EmailSubmission) Loads() *Loaded       { return &e.Rel.Loaded }
func (t *Terminal) Loads() *Loaded              { return &t.Rel.Loaded }
func (t *RailTerminal) Loads() *Loaded          { return &t.Rel.Loaded }
func (c *CustomField) Loads() *Loaded           { return &c.Rel.Loaded }
func (d *CustomFieldDefinition) Loads() *Loaded { return &d.Rel.Loaded }
func (o *CustomFieldOption) Loads() *Loaded     { return &o.Rel.Loaded }

func orEmpty[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// ---------------------------------------------------------------- Shipment

func (s *Shipment) Containers() []*Container     { return orEmpty(s.Rel.Containers) }
func (s *Shipment) CustomFields() []*CustomField { return orEmpty(s.Rel.CustomFields) }
func (s *Shipment) Documents() []*Document       { return orEmpty(s.Rel.Documents) }
func (s *Shipment) TrackingRequests() []*TrackingRequest {
	return orEmpty(s.Rel.TrackingRequests)
}
func (s *Shipment) PortOfLading() *Port    { return s.Rel.PortOfLading }
func (s *Shipment) PortOfDischarge() *Port { return s.Rel.PortOfDischarge }
func (s *Shipment) PodTerminal() *Terminal { return s.Rel.PodTerminal }
func (s *Shipment) LineTrackingStoppedByUser() *User {
	return s.Rel.LineTrackingStoppedByUser
}

// Destination is the metro area when the shipment names one, else the port.
func (s *Shipment) Destination() Destination {
	if s.Rel.DestinationMetroArea != nil {
		return s.Rel.DestinationMetroArea
	}
	if s.Rel.DestinationPort != nil {
		return s.Rel.DestinationPort
	}
	return nil
}

// DestinationTerminal is the rail terminal when the shipment names one,
// else the terminal.
func (s *Shipment) DestinationTerminal() DestinationTerminal {
	if s.Rel.DestinationRailTerminal != nil {
		return s.Rel.DestinationRailTerminal
	}
	if s.Rel.DestinationTerminal != nil {
		return s.Rel.DestinationTerminal
	}
	return nil
}

// CustomField is the value of the definition apiSlug, nil when unset.
func (s *Shipment) CustomField(apiSlug string) *CustomField {
	for _, f := range s.Rel.CustomFields {
		if f.APISlug == apiSlug {
			return f
		}
	}
	return nil
}

// RefNumberList and TagList are refNumbers and tags as GraphQL lists.
func (s *Shipment) RefNumberList() []string { return s.RefNumbers }
func (s *Shipment) TagList() []string {
	if s.Tags == nil {
		return []string{}
	}
	return s.Tags
}

// ---------------------------------------------------------------- Container

// Shipment is the container's shipment; a container always has one.
func (c *Container) Shipment() (*Shipment, error) {
	if c.Rel.Shipment == nil {
		return nil, NotFound("shipment")
	}
	return c.Rel.Shipment, nil
}
func (c *Container) PodTerminal() *Terminal       { return c.Rel.PodTerminal }
func (c *Container) PickupFacility() *Terminal    { return c.Rel.PickupFacility }
func (c *Container) CustomFields() []*CustomField { return orEmpty(c.Rel.CustomFields) }
func (c *Container) Documents() []*Document       { return orEmpty(c.Rel.Documents) }
func (c *Container) RefNumberList() []string      { return orEmpty([]string(c.RefNumbers)) }
func (c *Container) HoldList() []*TerminalHold    { return ptrs(c.HoldsAtPodTerminal) }
func (c *Container) FeeList() []*TerminalFee      { return ptrs(c.FeesAtPodTerminal) }
func ptrs[T any](xs []T) []*T {
	out := make([]*T, len(xs))
	for i := range xs {
		out[i] = &xs[i]
	}
	return out
}

// ---------------------------------------------------------------- Document

// Account is the document's account; it always exists.
func (d *Document) Account() (*Account, error) {
	if d.Rel.Account == nil {
		return nil, NotFound("account")
	}
	return d.Rel.Account, nil
}
func (d *Document) User() *User                       { return d.Rel.User }
func (d *Document) EmailSubmission() *EmailSubmission { return d.Rel.EmailSubmission }
func (d *Document) LastDocumentRepresentation() *DocumentRepresentation {
	return d.Rel.LastDocumentRepresentation
}
func (d *Document) Shipments() []*Shipment { return orEmpty(d.Rel.Shipments) }
func (d *Document) Cargos() []*Container   { return orEmpty(d.Rel.Cargos) }

// ---------------------------------------------------------------- the rest

// Port is the terminal's port; a terminal always has one.
func (t *Terminal) Port() (*Port, error) {
	if t.Rel.Port == nil {
		return nil, NotFound("port")
	}
	return t.Rel.Port, nil
}
func (t *RailTerminal) Port() *Port           { return t.Rel.Port }
func (t *RailTerminal) MetroArea() *MetroArea { return t.Rel.MetroArea }

// Definition is the value's definition; it always exists.
func (c *CustomField) Definition() (*CustomFieldDefinition, error) {
	if c.Rel.Definition == nil {
		return nil, NotFound("custom field definition")
	}
	return c.Rel.Definition, nil
}

// Entity is the shipment, container or tracking request the value is set on.
func (c *CustomField) Entity() (CustomFieldEntity, error) {
	if c.ContainerID != nil {
		if c.Rel.Container == nil {
			return nil, NotFound("container")
		}
		return c.Rel.Container, nil
	}
	if c.TrackingRequestID != nil {
		if c.Rel.TrackingRequest == nil {
			return nil, NotFound("tracking request")
		}
		return c.Rel.TrackingRequest, nil
	}
	if c.Rel.Shipment == nil {
		return nil, NotFound("shipment")
	}
	return c.Rel.Shipment, nil
}

// Options are the definition's options, by position; none for types
// without options.
func (d *CustomFieldDefinition) Options() []*CustomFieldOption { return orEmpty(d.Rel.Options) }

// Definition is the option's definition; it always exists.
func (o *CustomFieldOption) Definition() (*CustomFieldDefinition, error) {
	if o.Rel.Definition == nil {
		return nil, NotFound("custom field definition")
	}
	return o.Rel.Definition, nil
}

// From, To and Cc lists of an email submission, and a shipping line's
// alternative SCACs, as GraphQL lists.
// Account is the submission's account; it always exists.
func (e *EmailSubmission) Account() (*Account, error) {
	if e.Rel.Account == nil {
		return nil, NotFound("account")
	}
	return e.Rel.Account, nil
}
func (e *EmailSubmission) User() *User            { return e.Rel.User }
func (e *EmailSubmission) Documents() []*Document { return orEmpty(e.Rel.Documents) }

func (e *EmailSubmission) FromList() []string { return orEmpty([]string(e.From)) }
func (e *EmailSubmission) ToList() []string   { return orEmpty([]string(e.To)) }
func (e *EmailSubmission) CcList() []string   { return orEmpty([]string(e.Cc)) }
func (l *ShippingLine) AlternativeScacList() []string {
	return orEmpty([]string(l.AlternativeScacs))
}

// Selection names, by GraphQL type name, the columns (db tags of the
// type's struct) a request reads; a type it does not name is read whole.
type Selection map[string][]string
