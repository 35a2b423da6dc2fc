package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
)

var approvalCases = []testCase{
	{"Lifecycle", testApprovalLifecycle},
	{"FindNewestByBinding", testApprovalFind},
	{"UseOnce", testApprovalUse},
}

func newApproval(id string, created time.Duration) *store.Approval {
	return &store.Approval{ID: id, Tool: "refund", ArgsHash: "h1", Args: json.RawMessage(`{"amount":9007199254740993}`),
		PrincipalID: "cust_1", RunID: "run-1", ConfigVersion: "v1", Rule: "over_limit", Reason: "too much",
		Status: store.ApprovalPending, CreatedAt: at(created), ExpiresAt: at(created + time.Hour)}
}

func testApprovalLifecycle(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.CreateApproval(ctx, newApproval("ap-1", 0)); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetApproval(ctx, "ap-1")
	if err != nil || got.Status != store.ApprovalPending || got.Tool != "refund" {
		t.Fatalf("GetApproval = %+v, %v", got, err)
	}
	checkJSON(t, "approval args", got.Args, json.RawMessage(`{"amount":9007199254740993}`))
	decided, err := s.DecideApproval(ctx, "ap-1", store.ApprovalApproved, store.Decider("alice", "ops"), "ok once", at(time.Minute))
	if err != nil || decided.Status != store.ApprovalApproved || decided.By != "alice" || decided.ByKey != "ops" || decided.Comment != "ok once" {
		t.Fatalf("DecideApproval = %+v, %v", decided, err)
	}
	if got, err := s.GetApproval(ctx, "ap-1"); err != nil || got.By != "alice" || got.ByKey != "ops" {
		t.Fatalf("GetApproval after the decision = %+v, %v; want by alice, key ops", got, err)
	}
	checkTime(t, "decided_at", decided.DecidedAt, at(time.Minute))
	if _, err := s.DecideApproval(ctx, "ap-1", store.ApprovalDenied, "bob", "", at(2*time.Minute)); !errors.Is(err, store.ErrApprovalDecided) {
		t.Errorf("second decision: %v, want ErrApprovalDecided", err)
	}
	if err := s.CreateApproval(ctx, newApproval("ap-2", 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DecideApproval(ctx, "ap-2", store.ApprovalApproved, "alice", "", at(2*time.Hour)); !errors.Is(err, store.ErrApprovalDecided) {
		t.Errorf("decision after expiry: %v, want ErrApprovalDecided", err)
	}
	if _, err := s.GetApproval(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("GetApproval(nope) = %v", err)
	}
	pending, err := s.ListApprovals(ctx, store.ApprovalPending, 10)
	if err != nil || len(pending) != 1 || pending[0].ID != "ap-2" {
		t.Errorf("ListApprovals(pending) = %+v, %v", pending, err)
	}
	all, err := s.ListApprovals(ctx, "", 10)
	if err != nil || len(all) != 2 {
		t.Errorf("ListApprovals(all) = %d, %v", len(all), err)
	}
}

func testApprovalFind(t *testing.T, s store.Store) {
	ctx := t.Context()
	for i, id := range []string{"ap-old", "ap-new"} {
		if err := s.CreateApproval(ctx, newApproval(id, time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	other := newApproval("ap-other-config", 5*time.Minute)
	other.ConfigVersion = "v2"
	if err := s.CreateApproval(ctx, other); err != nil {
		t.Fatal(err)
	}
	otherRun := newApproval("ap-other-run", 6*time.Minute)
	otherRun.RunID = "run-2"
	if err := s.CreateApproval(ctx, otherRun); err != nil {
		t.Fatal(err)
	}
	got, err := s.FindApproval(ctx, store.Binding{Tool: "refund", ArgsHash: "h1", PrincipalID: "cust_1", ConfigVersion: "v1", RunID: "run-1"})
	if err != nil || got.ID != "ap-new" {
		t.Fatalf("FindApproval = %+v, %v; want ap-new", got, err)
	}
	if got, err := s.FindApproval(ctx, otherRun.Binding()); err != nil || got.ID != "ap-other-run" {
		t.Fatalf("FindApproval(run-2) = %+v, %v; want ap-other-run", got, err)
	}
	if _, err := s.FindApproval(ctx, store.Binding{Tool: "refund", ArgsHash: "h2", PrincipalID: "cust_1", ConfigVersion: "v1", RunID: "run-1"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("other args: %v, want ErrNotFound", err)
	}
	if _, err := s.FindApproval(ctx, store.Binding{Tool: "refund", ArgsHash: "h1", PrincipalID: "cust_1", ConfigVersion: "v1", RunID: "run-3"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("another run: %v, want ErrNotFound", err)
	}
}

func testApprovalUse(t *testing.T, s store.Store) {
	ctx := t.Context()
	if err := s.CreateApproval(ctx, newApproval("ap-1", 0)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key  string
		want bool
	}{{"op-a", true}, {"op-a", true}, {"op-b", false}} {
		ok, err := s.UseApproval(ctx, "ap-1", c.key)
		if err != nil || ok != c.want {
			t.Errorf("UseApproval(%s) = %v, %v; want %v", c.key, ok, err, c.want)
		}
	}
}
