package model

import "github.com/99designs/gqlgen/graphql"

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

// CustomFieldDefinitionPatch is the input of a definition update: omitted
// fields keep their value; the nullable ones are Omittable so that an
// explicit null (clear) differs from an omitted field (keep), for GraphQL
// and /v2 PATCH bodies alike.
type CustomFieldDefinitionPatch struct {
	DisplayName   *string
	Description   graphql.Omittable[*string]
	Validation    graphql.Omittable[JSON]
	DefaultFormat graphql.Omittable[*string]
	DefaultValue  graphql.Omittable[JSON]
}

// ShipmentPatch is the input of a shipment update: omitted fields keep
// their value, null clears.
type ShipmentPatch struct {
	RefNumbers graphql.Omittable[[]string]
	Tags       graphql.Omittable[[]string]
}

// EmailSubmissionConnection is a page of email submissions.
type EmailSubmissionConnection struct {
	Edges    []*EmailSubmissionEdge
	Nodes    []*EmailSubmission
	PageInfo *PageInfo
}

type EmailSubmissionEdge struct {
	Cursor string
	Node   *EmailSubmission
}

// ShippingLineConnection is a page of shipping lines (reference data).
type ShippingLineConnection struct {
	Edges    []*ShippingLineEdge
	Nodes    []*ShippingLine
	PageInfo *PageInfo
}

type ShippingLineEdge struct {
	Cursor string
	Node   *ShippingLine
}

// ContainerPatch changes a container (GraphQL updateContainer, PATCH
// /v2/containers/{id}): its reference numbers, null clearing them.
type ContainerPatch struct {
	RefNumbers graphql.Omittable[[]string]
}
