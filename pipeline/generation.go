package pipeline

import (
	"errors"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/validate"
)

// swap compiles cfg (normalized) and makes it the configuration of the
// calls admitted from now on, returning the one it replaced (nil the first
// time). When cfg does not compile, or asks for limits the store cannot
// keep, nothing changes. New, Reload and SetTools all go through it.
func (p *Pipeline) swap(cfg *config.Config) (*live, error) {
	if cfg == nil {
		return nil, errors.New("pipeline: no configuration")
	}
	v, err := validate.Compile(cfg, p.env)
	if err != nil {
		return nil, err
	}
	return p.cur.Swap(newLive(cfg, v)), nil
}

// SetTools makes cfg (normalized) the pipeline's tools for the calls
// admitted after it returns: the imported tools of an MCP server that
// changed its list, for example. Unlike Reload it keeps every breaker and
// retry budget: the dependencies are the same. On an error the tools stay
// as they were.
func (p *Pipeline) SetTools(cfg *config.Config) error {
	_, err := p.swap(cfg)
	return err
}
