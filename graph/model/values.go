package model

// CustomFieldConnection is a page of custom field values (Query.customFields,
// GET /v2/custom_fields).
type CustomFieldConnection struct {
	Edges    []*CustomFieldEdge
	Nodes    []*CustomField
	PageInfo *PageInfo
	Filter   CustomFieldFilter
}

type CustomFieldEdge struct {
	Cursor string
	Node   *CustomField
}

// CustomFieldFilter narrows the account's custom field values; every given
// filter must match. Ids are lower-case UUIDs (normalised at the edge).
type CustomFieldFilter struct {
	EntityType   *CustomFieldEntityType
	EntityID     *string
	DefinitionID *string
}
