// Package validate is stage 1 of the toolgate pipeline: the pure checks a
// call must pass before anything is sent anywhere.
//
// Compile checks and compiles every tool of a config once (JSON Schemas,
// CEL rules, templates, lookups, state expressions) and reports every
// problem at once. Check then judges one call, cheapest check first, and
// stops at the first failure:
//
//	existence    unknown_tool        the tool is declared
//	shape        wrong_type          args is a JSON object
//	completeness missing_arguments   every required argument is there
//	no extras    unknown_arguments   no argument the tool does not have
//	types        wrong_type          each argument has its JSON type
//	constraints  invalid_argument    pattern, range, enum, length, format
//	permission   forbidden           the principal holds the permission
//	rules        <rule code>         CEL rules, in order (approval_required
//	                                 for approval rules, rule_error when a
//	                                 rule cannot be evaluated: fail closed)
//
// A checked call is prepared for the later stages in the same pass: the
// arguments of its ownership lookup (Checked.Owner) and, for a write, what
// it uses of each quota (Checked.Quotas); either one that cannot be
// evaluated refuses a call the rules pass. Ownership itself needs the
// lookup (I/O): Validator.CheckOwner makes it through the caller's Reader
// and judges the answer. A write's verify read, which settles an unknown
// outcome, is prepared, made and judged the same way when it is needed
// (Validator.Verify).
//
// Every refusal message is written for the model that made the call: it
// names the tool, arguments and values concerned and says what to do next.
package validate
