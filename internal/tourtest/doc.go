// Package tourtest runs the README's tour as a script and audits the
// configs of the README, docs/ and examples/.
//
// The tour is the README's fenced blocks marked by an HTML comment on the
// line above the fence:
//
//	<!-- tour -->                       a block of shell commands, run in order in one bash
//	<!-- tour output -->                what the tour block before it prints ("..." matches any text;
//	                                    JSON may leave fields out)
//	<!-- tour excerpt: PATH -->         a block that must appear, verbatim, in the file PATH
//
// The ports the tour names (127.0.0.1:PORT) are swapped for free ones, the
// same port for the same number everywhere (commands, outputs, the files
// the tour uses), so that a command and a config that disagree still fail.
//
// Its tests run the real binary: `toolgate serve`, two `toolgate sim
// payments` processes and the commands the README prints, and they check
// that every documented config that claims its provider honours the
// operation key (idempotency.header) is documented with a simulator that
// does (--honour-keys), and that every full config passes `toolgate check`.
package tourtest
