package tourtest

import (
	"fmt"
	"regexp"
	"strings"
)

// Block is one fenced block of a Markdown page.
type Block struct {
	// Marker is the text of the HTML comment on the line above the fence
	// ("tour", "tour output", "tour excerpt: examples/tour/toolgate.yaml"),
	// or "" when there is none.
	Marker string
	// Lang is the fence's info string ("sh", "yaml", "json", "").
	Lang string
	// Text is the block's content, ending with a newline when not empty.
	Text string
	// Line is the 1-based line of the opening fence.
	Line int
}

var markerPattern = regexp.MustCompile(`^<!--\s*(.*?)\s*-->$`)

// Blocks returns the fenced blocks of a Markdown page in order.
func Blocks(page string) []Block {
	var out []Block
	lines := strings.Split(page, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t\r")
		if !strings.HasPrefix(line, "```") {
			continue
		}
		b := Block{Lang: strings.TrimSpace(strings.TrimPrefix(line, "```")), Line: i + 1}
		if i > 0 {
			if m := markerPattern.FindStringSubmatch(strings.TrimSpace(lines[i-1])); m != nil {
				b.Marker = m[1]
			}
		}
		var text strings.Builder
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimRight(lines[i], " \t\r"), "```"); i++ {
			text.WriteString(lines[i])
			text.WriteByte('\n')
		}
		b.Text = text.String()
		out = append(out, b)
	}
	return out
}

// Step is one tour block and the output shown for it, if any.
type Step struct {
	// Run is the block of commands.
	Run Block
	// Want is the "tour output" block after it, or nil.
	Want *Block
}

// Excerpt is a block that must appear verbatim in a file.
type Excerpt struct {
	Block
	// Path is the file, relative to the page's repository.
	Path string
}

// Tour returns a page's tour: its steps in order and its excerpts. An
// output block that follows no tour block, or an unknown "tour" marker, is
// an error.
func Tour(blocks []Block) (steps []Step, excerpts []Excerpt, err error) {
	for i, b := range blocks {
		switch {
		case b.Marker == "tour":
			steps = append(steps, Step{Run: b})
		case b.Marker == "tour output":
			if i == 0 || blocks[i-1].Marker != "tour" || len(steps) == 0 {
				return nil, nil, fmt.Errorf("line %d: a tour output block must follow a tour block", b.Line)
			}
			want := b
			steps[len(steps)-1].Want = &want
		case strings.HasPrefix(b.Marker, "tour excerpt:"):
			path := strings.TrimSpace(strings.TrimPrefix(b.Marker, "tour excerpt:"))
			excerpts = append(excerpts, Excerpt{Block: b, Path: path})
		case strings.HasPrefix(b.Marker, "tour"):
			return nil, nil, fmt.Errorf("line %d: unknown marker <!-- %s --> (want tour, tour output or tour excerpt: PATH)", b.Line, b.Marker)
		}
	}
	return steps, excerpts, nil
}

// portPattern finds the loopback ports a text names.
var portPattern = regexp.MustCompile(`\b(127\.0\.0\.1|localhost):([0-9]{2,5})\b`)

// Ports returns the distinct loopback ports the texts name, in order of
// first appearance.
func Ports(texts ...string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range texts {
		for _, m := range portPattern.FindAllStringSubmatch(t, -1) {
			if !seen[m[2]] {
				seen[m[2]] = true
				out = append(out, m[2])
			}
		}
	}
	return out
}

// SwapPorts replaces each loopback port of s that swap names by its
// replacement.
func SwapPorts(s string, swap map[string]string) string {
	return portPattern.ReplaceAllStringFunc(s, func(m string) string {
		host, port, _ := strings.Cut(m, ":")
		if to, ok := swap[port]; ok {
			return host + ":" + to
		}
		return m
	})
}
