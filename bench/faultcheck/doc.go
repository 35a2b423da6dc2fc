// Package faultcheck runs toolgate under faults and checks the whole
// history afterwards, for the fault scenarios of the end-to-end tests and
// for toolgate-bench faults.
//
// A run starts a payment provider (a real HTTP server on 127.0.0.1) behind
// a [faultproxy.Proxy], the real `toolgate serve` in front of it, and a
// steady load of distinct writes, repeats and reads from several callers.
// A schedule of faults is applied one after another; after each fault
// ends, a probe measures how long until a new write succeeds. At the end
// `toolgate reconcile` runs beside the server, and [Check] compares the
// provider's effects with the ledger, the answers with the execution rows,
// each run's state with the effects, and every answer's time with its
// budget. docs/reliability.md lists the faults and the promises checked.
package faultcheck
