package pipeline

import (
	"errors"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/validate"
)

// live is one compiled configuration. A call takes the current one when it
// is admitted and keeps it to its end, lookups and verify reads included,
// so a reload never changes a call half way through.
type live struct {
	tools     *config.Config
	validator *validate.Validator
	// toolDeps names the breaker and retry budget of each tool that has
	// no dependency of its own ("tool:" and its name), made once here
	// rather than at every attempt.
	toolDeps map[string]string
}

// newLive is the compiled configuration of cfg under v.
func newLive(cfg *config.Config, v *validate.Validator) *live {
	l := &live{tools: cfg, validator: v, toolDeps: map[string]string{}}
	for _, spec := range cfg.Tools {
		if spec != nil && spec.Dependency == "" {
			l.toolDeps[spec.Name] = "tool:" + spec.Name
		}
	}
	return l
}

// Reload compiles cfg (loaded and normalized) and makes it the configuration
// of every call admitted from now on; calls in flight finish under the one
// they were admitted with. When cfg does not compile, the error lists every
// problem and nothing changes.
//
// Circuit breakers and retry budgets are kept by dependency name: a
// dependency the new config still has keeps its state (its new settings,
// if changed, apply from its next call), and so do its statistics, which
// are kept by tool name outside the pipeline. The breaker and budget of a
// dependency whose base_url changed start afresh: the failures of one
// service say nothing about another; those of a removed dependency are
// dropped.
func (p *Pipeline) Reload(cfg *config.Config) error {
	old, err := p.swap(cfg)
	if err != nil {
		return err
	}
	for name, was := range old.tools.Dependencies {
		now := cfg.Dependencies[name]
		if now == nil || was == nil || now.BaseURL != was.BaseURL {
			p.breakers.Forget(name)
			p.budgets.Forget(name)
		}
	}
	return nil
}

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
