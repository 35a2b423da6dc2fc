package validate

import "github.com/toolgate/toolgate/config"

// Catalogue returns the catalogue of the API key named key: the tools it
// may call and the tools its lists show (see config.Catalogues.For).
// Compile resolves every key's catalogue once, so this is a map lookup.
func (v *Validator) Catalogue(key string) *config.Catalogue {
	return v.catalogues.For(key)
}
