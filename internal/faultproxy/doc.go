// Package faultproxy puts a TCP proxy that injects network faults between
// toolgate and something it depends on (PostgreSQL, an HTTP or MCP
// dependency), for the fault scenarios in tests and for toolgate-bench
// faults.
//
// It wraps Shopify's toxiproxy in-process: one [Proxy] listens on
// 127.0.0.1:0 and forwards to one upstream address; each fault method
// replaces whatever fault was on before it, and [Proxy.Heal] takes every
// fault off. The faults and what toolgate promises under each are
// described in docs/reliability.md.
package faultproxy
