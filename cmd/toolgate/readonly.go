package main

import (
	"context"
	"log/slog"
	"os"
	"regexp"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/storeurl"
)

// openReadOnly opens the gateway of a config on its store without crash
// recovery, so that it can run beside a server on the same SQLite file.
// The returned func closes both.
func openReadOnly(ctx context.Context, path string) (*toolgate.Gateway, func(), error) {
	cfg, st, err := openConfigStore(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	gw, err := toolgate.Open(ctx, toolgate.Options{Config: cfg, Store: st, Logger: slog.New(slog.DiscardHandler), Offline: true})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return gw, func() { gw.Close(); st.Close() }, nil
}

// openConfigStore loads the config file at path without needing its
// secrets (loadWithoutSecrets) and opens its store without crash recovery
// (no operation is taken over or abandoned), so that a command can read it
// beside a running server. The caller closes the store.
func openConfigStore(ctx context.Context, path string) (*config.Config, store.Store, error) {
	cfg, err := loadWithoutSecrets(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := storeurl.Open(ctx, cfg.Store, storeurl.Options{})
	if err != nil {
		return nil, nil, err
	}
	return cfg, st, nil
}

// envRef is a ${NAME} reference of a config, as config.Load expands it.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// unsetPlaceholder stands for an unset variable in a config loaded by a
// command that uses no secret: long enough to pass as an API key.
const unsetPlaceholder = "toolgate-unset-variable-"

// loadWithoutSecrets loads a config for a command that sends nothing to a
// dependency and serves nothing (runs, replay, stats, approvals, ...): a
// ${NAME} whose variable is unset (a token, an API key) stands for a
// placeholder instead of stopping the command. When the config is not
// valid even so (the variable was the store's URL, say), the error is
// config.Load's, naming the variables that are unset.
func loadWithoutSecrets(path string) (*config.Config, error) {
	cfg, err := config.Load(path)
	if err == nil {
		return cfg, nil
	}
	raw, rerr := os.ReadFile(path)
	if rerr != nil {
		return nil, err
	}
	unset := false
	for _, m := range envRef.FindAllSubmatch(raw, -1) {
		if _, ok := os.LookupEnv(string(m[1])); !ok {
			unset = true
		}
	}
	if !unset {
		return nil, err
	}
	lenient, lerr := config.Parse(raw, path, func(name string) (string, bool) {
		if v, ok := os.LookupEnv(name); ok {
			return v, true
		}
		return unsetPlaceholder + name, true
	})
	if lerr != nil {
		return nil, err
	}
	return lenient, nil
}
