package feedback

import (
	"encoding/json"
	"fmt"
	"strings"
)

// contentBlock is what a description reads of one MCP content block.
type contentBlock struct {
	Type     string `json:"type"`
	MIMEType string `json:"mimeType"`
	Data     string `json:"data"`
	URI      string `json:"uri"`
	Name     string `json:"name"`
	Resource *struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
		Text     string `json:"text"`
		Blob     string `json:"blob"`
	} `json:"resource"`
}

// maxLinksNamed bounds how many resource links a description names.
const maxLinksNamed = 5

// DescribeContent describes the non-text blocks of an MCP tool's content
// (a JSON array) for the model, e.g. "1 image, image/png, 1.2 KB; 2
// resource links: file:///a.txt, file:///b.txt". Text blocks are left out:
// their text is the result's data. It returns "" when there is nothing but
// text, or the content is not a JSON array.
func DescribeContent(content json.RawMessage) string {
	var blocks []contentBlock
	if len(content) == 0 || json.Unmarshal(content, &blocks) != nil {
		return ""
	}
	var parts []string
	var links []string
	for _, c := range blocks {
		switch c.Type {
		case "text":
		case "image", "audio":
			parts = append(parts, fmt.Sprintf("1 %s, %s, %s", c.Type, orUnknown(c.MIMEType), size(base64Len(c.Data))))
		case "resource_link":
			l := c.URI
			if c.Name != "" && !strings.HasSuffix(c.URI, c.Name) {
				l += " (" + c.Name + ")"
			}
			links = append(links, l)
		case "resource":
			if c.Resource == nil {
				parts = append(parts, "1 embedded resource")
				continue
			}
			n := len(c.Resource.Text)
			if c.Resource.Blob != "" {
				n = base64Len(c.Resource.Blob)
			}
			parts = append(parts, fmt.Sprintf("1 embedded resource, %s, %s, %s", c.Resource.URI, orUnknown(c.Resource.MIMEType), size(n)))
		default:
			parts = append(parts, fmt.Sprintf("1 %q block", c.Type))
		}
	}
	if len(links) > 0 {
		named := links[:min(len(links), maxLinksNamed)]
		s := fmt.Sprintf("%s: %s", plural(len(links), "resource link"), strings.Join(named, ", "))
		if len(links) > len(named) {
			s += fmt.Sprintf(" and %d more", len(links)-len(named))
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func orUnknown(mime string) string {
	if mime == "" {
		return "no MIME type"
	}
	return mime
}

// base64Len is the number of bytes a base64 text decodes to.
func base64Len(s string) int {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	return len(s) * 3 / 4
}

// size writes a byte count for people: "68 bytes", "1.2 KB", "3.4 MB".
func size(n int) string {
	switch {
	case n < 1000:
		return plural(n, "byte")
	case n < 1000*1000:
		return fmt.Sprintf("%.1f KB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
