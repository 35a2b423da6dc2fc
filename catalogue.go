package toolgate

import "github.com/toolgate/toolgate/config"

// Catalogue returns what the API key named key sees and may call under the
// gateway's current configuration: its auth.keys[].tools list resolved
// against every tool, and the tools its lists show (narrowed by the key's
// pinned principal). The empty name (no key) sees every tool. Lists
// (GET /v1/tools, MCP tools/list) show Listed; a call of a tool outside
// Callable is unknown_tool.
func (g *Gateway) Catalogue(key string) *config.Catalogue {
	return g.pipeline.Validator().Catalogue(key)
}
