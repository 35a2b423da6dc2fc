// Package faultproxy puts a TCP proxy that injects network faults between
// toolgate and something it depends on (PostgreSQL, an HTTP or MCP
// dependency), for the fault scenarios in tests and for toolgate-bench
// faults.
//
// One [Proxy] listens on 127.0.0.1:0 and forwards to one upstream
// address; each fault method replaces whatever fault was on before it, and
// [Proxy.Heal] takes every fault off. Faults act on new and existing
// connections alike. The faults and what toolgate promises under each are
// described in docs/reliability.md.
//
// It is a small proxy of its own rather than Shopify's toxiproxy run
// in-process: toxiproxy's toxics leave goroutines blocked for good when a
// connection closes mid-fault (the slicer behind a trickle does), which
// goleak rightly refuses.
package faultproxy
