package model

// Connection models: the page and what is needed to count the whole list,
// so totalCount costs a statement only when a client asks for it.

type ShipmentConnection struct {
	Edges    []*ShipmentEdge
	Nodes    []*Shipment
	PageInfo *PageInfo
	Filter   ShipmentFilter
}

type ShipmentEdge struct {
	Cursor string
	Node   *Shipment
}

type ContainerConnection struct {
	Edges    []*ContainerEdge
	Nodes    []*Container
	PageInfo *PageInfo
	Filter   ContainerFilter
}

type ContainerEdge struct {
	Cursor string
	Node   *Container
}

type DocumentConnection struct {
	Edges    []*DocumentEdge
	Nodes    []*Document
	PageInfo *PageInfo
	Filter   DocumentFilter
}

type DocumentEdge struct {
	Cursor string
	Node   *Document
}

type CustomFieldDefinitionConnection struct {
	Edges    []*CustomFieldDefinitionEdge
	Nodes    []*CustomFieldDefinition
	PageInfo *PageInfo
	Filter   CustomFieldDefinitionFilter
}

type CustomFieldDefinitionEdge struct {
	Cursor string
	Node   *CustomFieldDefinition
}

// Node, union and interface markers required by gqlgen for autobound types.

func (Account) IsNode()                        {}
func (x Account) GetID() string                { return x.ID }
func (User) IsNode()                           {}
func (x User) GetID() string                   { return x.ID }
func (Shipment) IsNode()                       {}
func (x Shipment) GetID() string               { return x.ID }
func (Shipment) IsCustomFieldEntity()          {}
func (Container) IsNode()                      {}
func (x Container) GetID() string              { return x.ID }
func (Container) IsCustomFieldEntity()         {}
func (TrackingRequest) IsCustomFieldEntity()   {}
func (Port) IsNode()                           {}
func (x Port) GetID() string                   { return x.ID }
func (Port) IsDestination()                    {}
func (MetroArea) IsNode()                      {}
func (x MetroArea) GetID() string              { return x.ID }
func (MetroArea) IsDestination()               {}
func (Terminal) IsNode()                       {}
func (x Terminal) GetID() string               { return x.ID }
func (Terminal) IsDestinationTerminal()        {}
func (RailTerminal) IsNode()                   {}
func (x RailTerminal) GetID() string           { return x.ID }
func (RailTerminal) IsDestinationTerminal()    {}
func (ShippingLine) IsNode()                   {}
func (x ShippingLine) GetID() string           { return x.ID }
func (Document) IsNode()                       {}
func (x Document) GetID() string               { return x.ID }
func (EmailSubmission) IsNode()                {}
func (x EmailSubmission) GetID() string        { return x.ID }
func (DocumentRepresentation) IsNode()         {}
func (x DocumentRepresentation) GetID() string { return x.ID }
func (CustomFieldDefinition) IsNode()          {}
func (x CustomFieldDefinition) GetID() string  { return x.ID }
func (CustomFieldOption) IsNode()              {}
func (x CustomFieldOption) GetID() string      { return x.ID }
func (CustomField) IsNode()                    {}
func (x CustomField) GetID() string            { return x.ID }
