package storeurl

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/types"
)

// A started operation of a process that died is turned to unknown by the
// next process that opens the file for serving, but not while another
// serving process holds it.
func TestRecoverOnlyWhenNoOneServes(t *testing.T) {
	ctx := context.Background()
	url := "sqlite:" + filepath.Join(t.TempDir(), "tg.db")
	serving, err := Open(ctx, url, Options{Owner: "a", Recover: true})
	if err != nil {
		t.Fatal(err)
	}
	op := &types.Operation{Key: "k", ArgsHash: "h", RunID: "r", Tool: "t", Owner: "a", LeaseUntil: time.Now().Add(time.Hour)}
	if _, began, err := serving.BeginOperation(ctx, op); err != nil || !began {
		t.Fatalf("begin: %v %v", began, err)
	}
	// A second process while the first serves: nothing is recovered.
	second, err := Open(ctx, url, Options{Owner: "b", Recover: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := second.GetOperation(ctx, "k"); got.Status != types.OpStarted {
		t.Fatalf("a live process's operation became %s", got.Status)
	}
	second.Close()
	// The first "crashes" (closes without settling); the next one recovers.
	serving.Close()
	next, err := Open(ctx, url, Options{Owner: "c", Recover: true})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if got, _ := next.GetOperation(ctx, "k"); got.Status != types.OpUnknown {
		t.Fatalf("after restart the operation is %s, want unknown", got.Status)
	}
}

func TestUnknownStore(t *testing.T) {
	if _, err := Open(context.Background(), "mysql://x", Options{}); err == nil {
		t.Fatal("want an error")
	}
}
