package validate

import "github.com/toolgate/toolgate/config"

// Catalogue returns the catalogue of the API key named key: the tools it
// may call and the tools its lists show (see config.Catalogues.For).
// Compile resolves every key's catalogue once, so this is a map lookup.
func (v *Validator) Catalogue(key string) *config.Catalogue {
	return v.catalogues.For(key)
}

// resolveCatalogues resolves every key's tools: list against cfg's tools
// (declared and imported alike: Compile sees them all) and returns the
// entries that match no tool or are malformed, each naming the entry and
// the key.
func (v *Validator) resolveCatalogues(cfg *config.Config) []*Problem {
	cats, cps := cfg.Catalogues()
	v.catalogues = cats
	ps := make([]*Problem, len(cps))
	for i, p := range cps {
		ps[i] = &Problem{Key: p.Key, Why: p.Why}
	}
	return ps
}
