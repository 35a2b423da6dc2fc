package pipeline

import (
	"errors"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/validate"
)

// generation is one set of tools and their compiled checks. A call reads
// the current one; SetTools swaps in another without stopping calls.
type generation struct {
	tools     *config.Config
	validator *validate.Validator
}

func (p *Pipeline) cfg() *config.Config      { return p.gen.Load().tools }
func (p *Pipeline) val() *validate.Validator { return p.gen.Load().validator }

// SetTools compiles cfg (normalized) and makes it the pipeline's tools for
// the calls that start after it returns: the imported tools of an MCP
// server that changed its list, for example. On an error the tools stay as
// they were. The breakers, retry budgets and the ledger are kept.
func (p *Pipeline) SetTools(cfg *config.Config) error {
	if cfg == nil {
		return errors.New("pipeline: SetTools needs a config")
	}
	v, err := validate.Compile(cfg, p.env)
	if err != nil {
		return err
	}
	p.gen.Store(&generation{tools: cfg, validator: v})
	return nil
}
