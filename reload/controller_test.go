package reload_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/reload"
)

// target is a gateway as the controller sees it: a live config, a clock
// the test moves, and an apply that fails when told to.
type target struct {
	live *config.Config
	now  time.Time
	fail error
}

func (g *target) controller() *reload.Controller {
	return reload.New(reload.Config{Live: func() *config.Config { return g.live }, Now: func() time.Time { return g.now },
		Apply: func(c *config.Config) error {
			if g.fail != nil {
				return g.fail
			}
			g.live = c
			return nil
		}})
}

func parse(t *testing.T, text string) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte(text), "toolgate.yaml", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The controller applies a config with the restart-only keys carried
// over, remembers when it went live and what waits for a restart, and
// on a refused apply keeps the live config and its load time, reporting
// each problem's first line only.
func TestControllerOutcomes(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	g := &target{live: parse(t, "listen: 127.0.0.1:8080\n"), now: start}
	c := g.controller()
	g.now = start.Add(time.Minute)
	out, err := c.Reload(parse(t, "listen: 127.0.0.1:9999\nmax_state_bytes: 2048\n"))
	if err != nil || !out.OK || !slices.Equal(out.NotApplied, []string{"listen"}) {
		t.Fatalf("reload = %+v, %v; want ok with listen not applied", out, err)
	}
	if g.live.Listen != "127.0.0.1:8080" || g.live.MaxStateBytes != 2048 {
		t.Errorf("live listen %q max_state_bytes %d: want the running listen kept, the rest applied", g.live.Listen, g.live.MaxStateBytes)
	}
	info := c.Info()
	if !info.LoadedAt.Equal(g.now) || !slices.Equal(info.RestartRequired, []string{"listen"}) || info.LastReload == nil || !info.LastReload.OK {
		t.Errorf("info after the reload: %+v", info)
	}
	g.now, g.fail = start.Add(2*time.Minute), errors.Join(errors.New("tools.a: bad\n  1 | secret: x"), errors.New("tools.b: worse"))
	out, err = c.Reload(parse(t, "listen: 127.0.0.1:8080\n"))
	if err == nil || out.OK || !slices.Equal(out.Problems, []string{"tools.a: bad", "tools.b: worse"}) || out.Version != info.Version {
		t.Fatalf("refused reload = %+v, %v", out, err)
	}
	if after := c.Info(); !after.LoadedAt.Equal(info.LoadedAt) || after.LastReload.OK || !after.LastReload.At.Equal(g.now) {
		t.Errorf("info after a refused reload: %+v", after)
	}
	if _, err := c.Reload(nil); err == nil {
		t.Error("a nil config reloaded")
	}
}
