package pipeline

import (
	"errors"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/validate"
)

// val is the compiled configuration new calls are admitted under, for the
// paths that have no call of their own (exports, what-if). A call uses its
// flight's cfg, the one it was admitted under.
func (p *Pipeline) val() *validate.Validator { return p.cur.Load().validator }

// SetTools compiles cfg (normalized) and makes it the pipeline's tools for
// the calls admitted after it returns: the imported tools of an MCP server
// that changed its list, for example. Unlike Reload it keeps every breaker
// and retry budget: the dependencies are the same. On an error the tools
// stay as they were.
func (p *Pipeline) SetTools(cfg *config.Config) error {
	if cfg == nil {
		return errors.New("pipeline: SetTools needs a config")
	}
	v, err := validate.Compile(cfg, p.env)
	if err != nil {
		return err
	}
	p.cur.Store(&live{tools: cfg, validator: v})
	return nil
}
