package model

// The Apollo Federation entities (schema.graphqls, @key; docs/federation.md)
// are members of the _Entity union of gqlgen's federation plugin, which
// asks them to implement its fedruntime.Entity interface.

func (Shipment) IsEntity()              {}
func (Container) IsEntity()             {}
func (Document) IsEntity()              {}
func (Terminal) IsEntity()              {}
func (Port) IsEntity()                  {}
func (ShippingLine) IsEntity()          {}
func (CustomFieldDefinition) IsEntity() {}
