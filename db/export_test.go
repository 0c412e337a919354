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

// OutputNames returns the output column names of a select list.
func OutputNames(list string) []string {
	items := splitSelect(list)
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = outputName(it)
	}
	return names
}
