package main

import (
	"errors"
	"io/fs"
	"os"
	"strings"
)

// notesFile is the hand-kept file of what each target's profile says and
// what would close its gap, relative to the module's root. The report
// shows a missed target's section beside it.
const notesFile = "bench/notes.md"

// readNotes reads notesFile: each section begins with a "## <target id>"
// line and runs to the next. A missing file is no notes.
func readNotes(root string) (map[string]string, error) {
	b, err := os.ReadFile(inRoot(root, notesFile))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return parseNotes(string(b)), nil
}

// parseNotes splits notes into sections by their "## id" headings.
func parseNotes(s string) map[string]string {
	notes := map[string]string{}
	id := ""
	var body []string
	flush := func() {
		if id != "" {
			notes[id] = strings.TrimSpace(strings.Join(body, "\n"))
		}
	}
	for _, line := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(line, "## "); ok {
			flush()
			id, body = strings.TrimSpace(rest), nil
			continue
		}
		body = append(body, line)
	}
	flush()
	return notes
}
