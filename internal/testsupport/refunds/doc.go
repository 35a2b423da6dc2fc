// Package refunds is the tests' one refunds fixture: a payments dependency
// with the tools get_order, list_refunds and issue_refund (permission,
// idempotency key, an over-limit rule, an owner check, a verify read and
// state updates), kept in testdata/toolgate.yaml.
//
// A test takes the whole fixture and says only what it changes:
//
//	yaml := refunds.Config(provider.URL,
//		refunds.Set("store", "sqlite:toolgate.db"),
//		refunds.Delete("tools.issue_refund.owner"))
//
// The package is a leaf: it imports nothing of toolgate, so any test
// package may use it.
package refunds
