package model

import (
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// DocumentTypes are the document types an account may set by hand
// (PATCH /v2/documents/{id} document_type_manual, GET /v2/documents/types),
// with their labels, in display order. The classifier uses the same codes.
var DocumentTypes = []*DocumentTypeInfo{
	{Code: "bill_of_lading", Label: "Bill of Lading"},
	{Code: "commercial_invoice", Label: "Commercial Invoice"},
	{Code: "packing_list", Label: "Packing List"},
	{Code: "certificate_of_origin", Label: "Certificate of Origin"},
	{Code: "arrival_notice", Label: "Arrival Notice"},
	{Code: "delivery_order", Label: "Delivery Order"},
	{Code: "customs_entry", Label: "Customs Entry"},
	{Code: "other", Label: "Other"},
}

// DocumentTypeInfo is one document type: its code and label.
type DocumentTypeInfo struct {
	Code  string `json:"code"`
	Label string `json:"label"`
}

// DocumentPatch is the input of a document update: omitted fields keep
// their value, null clears.
type DocumentPatch struct {
	DocumentTypeManual graphql.Omittable[*string]
}

// DocumentSchema is one version of the fields extracted from documents of
// a type (GET /v2/document_schemas/{id}); ID is its full version,
// "<document_type>@<schema_version>".
type DocumentSchema struct {
	ID            string
	DocumentType  string
	Label         string
	SchemaVersion string
	Current       bool
	Draft         bool
	ActiveAt      time.Time
	Description   string
	// Payload is the JSON Schema of the extracted fields.
	Payload JSON
}
