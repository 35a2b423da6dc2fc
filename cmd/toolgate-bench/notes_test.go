package main

import (
	"os"
	"testing"
)

func TestParseNotes(t *testing.T) {
	got := parseNotes("# title\n\nintro\n\n## read-p50\n\nThe hop.\nMore.\n\n## write-p50\nFsync.\n")
	want := map[string]string{"read-p50": "The hop.\nMore.", "write-p50": "Fsync."}
	if len(got) != len(want) {
		t.Fatalf("%q, want %q", got, want)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %q, want %q", id, got[id], w)
		}
	}
}

// Every target has its section in bench/notes.md except the soak's, which
// must always be met; and every section names a target.
func TestNotesNameTheTargets(t *testing.T) {
	notes, err := readNotes("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("../../" + notesFile); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, tg := range evaluate(&reportData{notes: notes}) {
		ids[tg.ID] = true
		if _, ok := notes[tg.ID]; !ok && tg.Source != "soak" {
			t.Errorf("target %s (%s) has no section in %s", tg.ID, tg.Name, notesFile)
		}
	}
	for id := range notes {
		if !ids[id] {
			t.Errorf("%s has a section %q that names no target", notesFile, id)
		}
	}
}
