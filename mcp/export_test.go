package mcp

import "shipgraph/graph/executor"

// OperationText is the document and operation name a tool's operation
// sends (the statement-count test sends the same to /graphql).
func OperationText(file string) (text, name string, err error) {
	op, err := loadOperation(executor.NewExecutableSchema(executor.Config{}).Schema(), file)
	if err != nil {
		return "", "", err
	}
	return op.text, op.name, nil
}
