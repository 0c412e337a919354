package verb

import (
	"context"
	"errors"
	"io"
	"os"

	"shipgraph/config"
	"shipgraph/mcp"
)

// MCP is the stdio transport for desktop MCP clients: it forwards the
// JSON-RPC messages of stdin to a Shipgraph /mcp (--shipgraph-url) with the key of
// SHIPGRAPH_API_KEY (never a flag: flags show in ps), and its answers to
// stdout.
func MCP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, v := flags("mcp", config.MCP)
	if err := parse(fs, args, stdout, stderr, false); err != nil {
		return err
	}
	key := v.String(config.MCPAPIKey)
	if key == "" {
		return errors.New("set SHIPGRAPH_API_KEY to the API key to send")
	}
	return mcp.Proxy(ctx, v.String(config.MCPURL), key, os.Stdin, stdout, nil)
}
