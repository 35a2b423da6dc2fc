package feedback

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/types"
)

func TestDescribeContent(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"text only", `[{"type":"text","text":"hi"}]`, ""},
		{"not a list", `{"type":"text"}`, ""},
		{"an image", `[{"type":"text","text":"here"},{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("A", 1600) + `"}]`, "1 image, image/png, 1.2 KB"},
		{"audio", `[{"type":"audio","mimeType":"audio/wav","data":"AAAA"}]`, "1 audio, audio/wav, 3 bytes"},
		{"links", `[{"type":"resource_link","uri":"file:///a.txt","name":"a.txt"},{"type":"resource_link","uri":"demo://1","name":"Resource 1"}]`, "2 resource links: file:///a.txt, demo://1 (Resource 1)"},
		{"embedded", `[{"type":"resource","resource":{"uri":"demo://r/1","mimeType":"text/plain","text":"hello"}}]`, "1 embedded resource, demo://r/1, text/plain, 5 bytes"},
		{"unknown type", `[{"type":"hologram"}]`, `1 "hologram" block`},
	}
	for _, tt := range tests {
		if got := DescribeContent(json.RawMessage(tt.content)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestObservationOfContent: an answer that is only an image is described,
// never "showing 0 of 1"; text beside an image is the result, the image is
// named after it.
func TestObservationOfContent(t *testing.T) {
	img := `{"type":"image","mimeType":"image/png","data":"` + strings.Repeat("A", 1600) + `"}`
	tests := []struct {
		name, data, content, want string
	}{
		{"an image alone", `null`, `[` + img + `]`, "Result: 1 image, image/png, 1.2 KB."},
		{"text and an image", `"Here it is"`, `[{"type":"text","text":"Here it is"},` + img + `]`, `Result: "Here it is" Content beside it: 1 image, image/png, 1.2 KB.`},
	}
	for _, tt := range tests {
		res := &types.Result{OK: true, Data: json.RawMessage(tt.data), Content: json.RawMessage(tt.content), Meta: types.Meta{Tool: "get-tiny-image", Attempts: 1}}
		Annotate(res, &Facts{Dependency: "everything"})
		if !strings.Contains(res.Observation, tt.want) || strings.Contains(res.Observation, "showing") {
			t.Errorf("%s: %q, want it to contain %q", tt.name, res.Observation, tt.want)
		}
	}
}
