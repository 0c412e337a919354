package app

import (
	"log/slog"

	"shipgraph/graph/executor"
	"shipgraph/mcp"
)

// mcpServer is the MCP server the chain mounts on /mcp (httpapi.Config.MCP):
// its tools run trusted GraphQL operations through the chain's own routes.
func mcpServer(log *slog.Logger) (*mcp.Server, error) {
	return mcp.New(mcp.Config{Schema: executor.NewExecutableSchema(executor.Config{}).Schema(), Version: "shipgraph", Logger: log})
}
