// Command mcptestserver serves the mcptest fixture on stdin/stdout, for
// the stdio tests of toolgate's MCP client side.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/testsupport/mcptest"
)

func main() {
	f := mcptest.New()
	if err := f.Server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcptestserver:", err)
		os.Exit(1)
	}
}
