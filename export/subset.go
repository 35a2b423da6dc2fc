package export

import "github.com/toolgate/toolgate/config"

// Subset returns a view of cfg holding only the named tools (a key's
// catalogue), for Format and the other lists; names that are not tools
// are skipped. The tools are shared with cfg, not copied: the lists copy
// what they show. When names holds every tool, cfg itself is returned.
func Subset(cfg *config.Config, names []string) *config.Config {
	if cfg == nil {
		return nil
	}
	if len(names) == len(cfg.Tools) {
		all := true
		for _, n := range names {
			if cfg.Tools[n] == nil {
				all = false
				break
			}
		}
		if all {
			return cfg
		}
	}
	view := *cfg
	view.Tools = make(map[string]*config.Tool, len(names))
	for _, n := range names {
		if t := cfg.Tools[n]; t != nil {
			view.Tools[n] = t
		}
	}
	return &view
}
