package toolgate

import "github.com/toolgate/toolgate/internal/clock"

// Clock tells the time and waits: Now is the current time, and
// Sleep(ctx, d) waits for d or until ctx is done, returning ctx.Err() in the
// second case. Options.Clock takes one, so that a test can run the gateway
// (timeouts, back-off, leases, approval expiry) on a clock it moves itself;
// any type with these two methods will do.
type Clock = clock.Clock

// Rand is a source of uniform numbers in [0, 1), safe for concurrent use:
// the retry back-off's jitter (Options.Rand).
type Rand = clock.Rand
