package state

import (
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/expr"
	"github.com/toolgate/toolgate/internal/jsontext"
	"github.com/toolgate/toolgate/types"
)

func TestApplyIsPure(t *testing.T) {
	old := json.RawMessage(`{"refunded_paise":0,"notes":["a"]}`)
	before := string(old)
	next, err := Apply(old, map[string]any{"refunded_paise": json.Number("425000"), "refund_id": "RF-1"})
	if err != nil {
		t.Fatal(err)
	}
	if string(old) != before {
		t.Fatalf("Apply changed its input: %s", old)
	}
	if want := `{"notes":["a"],"refund_id":"RF-1","refunded_paise":425000}`; string(next) != want {
		t.Errorf("got %s, want %s", next, want)
	}
}

func TestPatchSeesTheOldState(t *testing.T) {
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	exprs := map[string]*expr.Program{}
	for k, src := range map[string]string{
		"refunded_paise": "state.refunded_paise + args.amount_paise",
		"refund_id":      "result.refund_id",
		"count":          "state.count + 1",
	} {
		if exprs[k], err = env.Compile(src); err != nil {
			t.Fatal(err)
		}
	}
	vars := &expr.Vars{
		Args:   map[string]any{"amount_paise": json.Number("9007199254740993")},
		State:  map[string]any{"refunded_paise": json.Number("0"), "count": json.Number("1")},
		Result: map[string]any{"refund_id": "RF-7"},
	}
	patch, err := Patch(exprs, vars)
	if err != nil {
		t.Fatal(err)
	}
	got := string(jsontext.Canonical(patch))
	if want := `{"count":2,"refund_id":"RF-7","refunded_paise":9007199254740993}`; got != want {
		t.Errorf("patch = %s, want %s", got, want)
	}
	if _, err := Patch(map[string]*expr.Program{"x": exprs["refund_id"]}, &expr.Vars{Result: map[string]any{}}); err == nil {
		t.Error("a failing expression must fail the patch, not set a partial state")
	}
}

func TestReplayFoldsInCommitOrder(t *testing.T) {
	initial := json.RawMessage(`{"balance":10}`)
	rows := []types.Execution{
		{Version: 3, StatePatch: json.RawMessage(`{"balance":7,"last":"c"}`)},
		{Version: 1, StatePatch: json.RawMessage(`{"balance":9,"last":"a"}`)},
		{Version: 2}, // a failed call: in history, no patch
		{Version: 4, StatePatch: json.RawMessage(`null`)},
	}
	got, err := Replay(initial, rows)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"balance":7,"last":"c"}`; string(got) != want {
		t.Errorf("replay = %s, want %s", got, want)
	}
	if !Equal(got, json.RawMessage(`{ "last": "c", "balance": 7 }`)) {
		t.Error("Equal must ignore key order and spacing")
	}
	if Equal(got, json.RawMessage(`{"balance":7}`)) {
		t.Error("Equal must see a missing key")
	}
}

func TestDecodeEmpty(t *testing.T) {
	for _, raw := range []string{"", "null", "{}"} {
		m, err := Decode(json.RawMessage(raw))
		if err != nil || len(m) != 0 {
			t.Errorf("Decode(%q) = %v, %v", raw, m, err)
		}
	}
	if _, err := Decode(json.RawMessage(`[1]`)); err == nil {
		t.Error("a state must be an object")
	}
}
