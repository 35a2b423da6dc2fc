package mcpcall

import (
	"errors"
	"strconv"
	"testing"
)

// TestListAllBounds: a list is followed page by page until its cursor
// ends, and cut (cut reported) at MaxListPages pages or MaxListItems
// items, keeping what was read.
func TestListAllBounds(t *testing.T) {
	tests := []struct {
		name      string
		pages     int // pages the server has; -1: it never stops
		perPage   int
		wantItems int
		wantCut   bool
	}{
		{"one page", 1, 3, 3, false},
		{"three pages", 3, 2, 6, false},
		{"a server that pages on and on", -1, 1, MaxListPages, true},
		{"more items than the bound", 3, MaxListItems, MaxListItems, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			items, cut, err := listAll(func(cursor string) ([]int, string, error) {
				calls++
				n := 0
				if cursor != "" {
					n, _ = strconv.Atoi(cursor)
				}
				page := make([]int, tt.perPage)
				next := strconv.Itoa(n + 1)
				if tt.pages >= 0 && n+1 >= tt.pages {
					next = ""
				}
				return page, next, nil
			})
			if err != nil || len(items) != tt.wantItems || cut != tt.wantCut {
				t.Fatalf("%d items, cut %v, err %v; want %d items, cut %v", len(items), cut, err, tt.wantItems, tt.wantCut)
			}
			if calls > MaxListPages {
				t.Errorf("%d pages read, more than %d", calls, MaxListPages)
			}
		})
	}
}

// listInto names a list a bound cut in the catalogue's Truncated, and a
// failed list by its method.
func TestListInto(t *testing.T) {
	c := &Catalogue{}
	forever := func(cursor string) ([]int, string, error) { return []int{1}, cursor + "x", nil }
	if _, err := listInto(c, "prompts", "prompts/list", forever); err != nil || len(c.Truncated) != 1 || c.Truncated[0] != "prompts" {
		t.Fatalf("a list cut at the bound: err %v, Truncated %q", err, c.Truncated)
	}
	failing := func(string) ([]int, string, error) { return nil, "", errors.New("boom") }
	if _, err := listInto(c, "resources", "resources/list", failing); err == nil || err.Error() != "resources/list: boom" {
		t.Fatalf("a failed list: %v", err)
	}
	if len(c.Truncated) != 1 {
		t.Errorf("a failed list was noted as cut: %q", c.Truncated)
	}
}
