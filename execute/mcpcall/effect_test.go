package mcpcall

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/types"
)

func TestEffectFromAnnotations(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name string
		a    *mcp.ToolAnnotations
		want types.Effect
	}{
		{"no annotations", nil, types.EffectWrite},
		{"empty annotations", &mcp.ToolAnnotations{}, types.EffectWrite},
		{"read-only", &mcp.ToolAnnotations{ReadOnlyHint: true}, types.EffectRead},
		{"read-only wins over idempotent", &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}, types.EffectRead},
		{"idempotent, not destructive", &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: &no}, types.EffectIdempotent},
		{"idempotent, destructive by default", &mcp.ToolAnnotations{IdempotentHint: true}, types.EffectIdempotent},
		{"idempotent and destructive (a file overwrite)", &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: &yes}, types.EffectIdempotent},
		{"not destructive alone", &mcp.ToolAnnotations{DestructiveHint: &no}, types.EffectWrite},
	}
	for _, tt := range tests {
		if got := Effect(tt.a); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}
