package toolsource

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/execute/mcpcall"
	"github.com/toolgate/toolgate/toolsource/openapi"
)

// Reload calls apply with cfg (normalized, imports not merged) merged with
// the tool lists of its sources: the OpenAPI documents of cfg read again
// (a changed document or import takes effect) and the lists the MCP
// servers last gave. The MCP servers themselves are connected at Open: a
// reload that adds, removes or changes one is refused (restart toolgate
// for that). Once apply succeeds, cfg is the base that refreshed lists are
// merged into; a refresh arriving meanwhile waits, so it merges into the
// new base, never the old one.
func (s *Sources) Reload(cfg *config.Config, apply func(*config.Config) error) error {
	switch {
	case s.imports:
		return s.reload(cfg, apply)
	case mcpcall.HasMCP(cfg):
		return errors.New("the new config adds MCP servers; they are connected when toolgate starts: restart toolgate")
	case openapi.Has(cfg):
		return reloadOpenAPI(cfg, apply)
	}
	return apply(cfg)
}

// reload is Reload for a gateway opened with tool sources.
func (s *Sources) reload(cfg *config.Config, apply func(*config.Config) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if changed := s.changedServers(cfg); len(changed) > 0 {
		return fmt.Errorf("dependencies %s: an MCP server is connected when toolgate starts; adding, removing or changing one needs a restart", strings.Join(changed, ", "))
	}
	merged, lists := cfg, s.lists
	if cfg.ImportsPending() {
		var err error
		if lists, err = s.reloadLists(cfg); err != nil {
			return err
		}
		if merged, err = cfg.Imported(lists); err != nil {
			return err
		}
	}
	if err := apply(merged); err != nil {
		return err
	}
	s.base, s.lists = cfg, lists
	return nil
}

// changedServers lists, sorted, the dependencies whose MCP server cfg
// adds, removes or changes. Called with s.mu held.
func (s *Sources) changedServers(cfg *config.Config) []string {
	var changed []string
	for name, d := range s.base.Dependencies {
		if d == nil || d.MCP == nil {
			continue
		}
		if nd := cfg.Dependencies[name]; nd == nil || !reflect.DeepEqual(nd.MCP, d.MCP) {
			changed = append(changed, name)
		}
	}
	for name, d := range cfg.Dependencies {
		if d != nil && d.MCP != nil && (s.base.Dependencies[name] == nil || s.base.Dependencies[name].MCP == nil) {
			changed = append(changed, name)
		}
	}
	slices.Sort(changed)
	return changed
}

// reloadLists are the tool lists a reload merges: the OpenAPI documents
// of cfg read again, and the lists the MCP servers last gave. Called with
// s.mu held.
func (s *Sources) reloadLists(cfg *config.Config) (map[string][]config.ImportedTool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultImportTimeout)
	defer cancel()
	lists, err := importOpenAPI(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for name, l := range s.lists {
		if d := cfg.Dependencies[name]; d != nil && d.MCP != nil {
			lists[name] = l
		}
	}
	return lists, nil
}

// reloadOpenAPI reloads a gateway that opened without tool sources into
// cfg, whose OpenAPI documents are read now.
func reloadOpenAPI(cfg *config.Config, apply func(*config.Config) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultImportTimeout)
	defer cancel()
	lists, err := importOpenAPI(ctx, cfg)
	if err != nil {
		return err
	}
	merged, err := cfg.Imported(lists)
	if err != nil {
		return err
	}
	return apply(merged)
}
