package execute

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine (a dial, a read timer,
// a connection's loops) is still running after they finish.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
