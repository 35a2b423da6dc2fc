package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// linkPattern finds the targets of Markdown links and images.
var linkPattern = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// The README and the pages of docs/ link only inside the repository (a user
// who clones it has nothing beside it), and every linked file exists. Web
// addresses are allowed.
func TestLinksStayInTheRepository(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{"../README.md"}, pages...)
	for _, page := range pages {
		for _, m := range linkPattern.FindAllStringSubmatch(read(t, page), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, anchor, _ := strings.Cut(target, "#")
			if target == "" {
				target = filepath.Base(page)
			}
			abs, err := filepath.Abs(filepath.Join(filepath.Dir(page), target))
			if err != nil {
				t.Fatal(err)
			}
			rel, err := filepath.Rel(root, abs)
			name := filepath.ToSlash(strings.TrimPrefix(page, "../"))
			if page != "../README.md" {
				name = "docs/" + page
			}
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				t.Errorf("%s links to %s, which is outside the repository: link to a page under docs/ instead", name, m[1])
				continue
			}
			if _, err := os.Stat(abs); err != nil {
				t.Errorf("%s links to %s, which does not exist", name, m[1])
				continue
			}
			if anchor != "" && strings.HasSuffix(abs, ".md") && !anchors(t, abs)[anchor] {
				t.Errorf("%s links to %s, but %s has no heading with the anchor #%s", name, m[1], filepath.Base(abs), anchor)
			}
		}
	}
}

// citesOutside matches a citation of the planning documents that sit
// beside a maintainer's checkout (the contract, or the folder it lives in
// one level up): users of the repository have neither.
var citesOutside = regexp.MustCompile(`CONTRACT|\.\./shared/`)

// Doc comments and pages cite docs/, never a contract file users do not
// have.
func TestNoCitationOutsideTheRepository(t *testing.T) {
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "vendor" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".md")) || strings.HasSuffix(path, "links_test.go") {
			return nil
		}
		for i, line := range strings.Split(read(t, path), "\n") {
			if citesOutside.MatchString(line) {
				t.Errorf("%s:%d cites a file users do not have: %q; cite the page under docs/ that says it", filepath.ToSlash(path[3:]), i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// anchors are the anchors of a Markdown page's headings, made as GitHub
// makes them: lower case, punctuation dropped, spaces as hyphens.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(read(t, path), "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}
