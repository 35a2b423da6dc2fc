// Package reload is a gateway's reload controller: it makes a new
// configuration the one every call admitted from then on runs under
// (docs/config.md, "Reloading without a restart"), keeps the restart-only keys (RestartOnlyKeys) at their
// running values, and remembers which configuration is live and how the
// last reload went (ConfigInfo).
//
// It knows the gateway only as the functions New is given (the live
// config, the clock, and how to apply a config): the gateway (the root
// package) imports it, never the reverse.
package reload
