package main

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
)

// watchReload reloads the config file at path on every SIGHUP: a valid new
// config applies to the calls admitted after it (those in flight finish
// under the old one); an invalid one is refused, every problem logged, and
// the old one stays. onReload is told about a config that went live. The
// returned func stops watching; call it before the gateway closes.
func watchReload(gw *toolgate.Gateway, path string, log *slog.Logger, onReload func(*config.Config)) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGHUP)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-sigs:
				if cfg := reload(gw, path, log); cfg != nil {
					onReload(cfg)
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
		<-finished
	}
}

// reload does one reload and logs it: one line for the outcome, one per
// problem of a refused file, one per key that needs a restart. It returns
// the config that went live, or nil.
func reload(gw *toolgate.Gateway, path string, log *slog.Logger) *config.Config {
	log.Info("SIGHUP: reloading the config", "file", path)
	out, err := gw.ReloadFile(path)
	if err != nil {
		problems := splitErrors(err)
		version := ""
		if out != nil {
			version = out.Version
		}
		log.Error("reload refused: the new config has problems; the old one stays live",
			"file", path, "problems", len(problems), "version", version)
		for _, p := range problems {
			log.Error("reload refused: config problem", "problem", p.Error())
		}
		return nil
	}
	for _, k := range out.NotApplied {
		log.Warn("reload: key changed but not applied; it takes effect at the next restart", "key", k)
	}
	cfg := gw.Config()
	log.Info("config reloaded", "file", path, "version", out.Version, "previous", out.Previous,
		"tools", len(cfg.Tools), "dependencies", len(cfg.Dependencies))
	return cfg
}

// splitErrors returns the errors joined in err (errors.Join), or err alone.
func splitErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
