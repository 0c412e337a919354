package db

// Columns exposes the column lists to the external tests, which check them
// against the model structs' db tags.
var Columns = map[string]string{
	"Account":                accountCols,
	"User":                   userCols,
	"APIToken":               tokenCols,
	"Port":                   portCols,
	"MetroArea":              metroAreaCols,
	"Terminal":               terminalCols,
	"RailTerminal":           railTerminalCols,
	"ShippingLine":           shippingLineCols,
	"Shipment":               shipmentCols,
	"Container":              containerCols,
	"Document":               documentCols,
	"EmailSubmission":        emailSubmissionCols,
	"DocumentRepresentation": documentRepresentationCols,
	"CustomFieldDefinition":  customFieldDefinitionCols,
	"CustomFieldOption":      customFieldOptionCols,
	"CustomField":            customFieldCols,
}
