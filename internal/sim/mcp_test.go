package sim

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The MCP face's create_refund honours the operation key toolgate sends in
// _meta exactly as the HTTP face honours Idempotency-Key: with HonourKeys,
// a repeat under the same key answers the first refund and makes none;
// without, or under another key, each call refunds.
func TestMCPCreateRefundHonoursTheOperationKey(t *testing.T) {
	for _, tc := range []struct {
		name    string
		honour  bool
		keys    []string
		refunds int
	}{
		{"honoured, the same key", true, []string{"op:1", "op:1"}, 1},
		{"honoured, two keys", true, []string{"op:1", "op:2"}, 2},
		{"honoured, no key", true, []string{"", ""}, 2},
		{"not honoured", false, []string{"op:1", "op:1"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPayments(Order{OrderID: "ORD-4471", CustomerID: "cust_42", AmountPaise: 500000})
			p.HonourKeys = tc.honour
			h := p.NewMCPHandler()
			srv := httptest.NewServer(h)
			defer srv.Close()
			defer h.CloseSessions()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
				Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			var ids []string
			for _, key := range tc.keys {
				params := &mcp.CallToolParams{Name: "create_refund", Arguments: map[string]any{"order_id": "ORD-4471", "amount_paise": 1000}}
				if key != "" {
					params.Meta = mcp.Meta{OperationKeyMeta: key}
				}
				res, err := cs.CallTool(t.Context(), params)
				if err != nil || res.IsError {
					t.Fatalf("create_refund: %v %+v", err, res)
				}
				var ref Refund
				b, _ := json.Marshal(res.StructuredContent)
				if err := json.Unmarshal(b, &ref); err != nil || ref.RefundID == "" {
					t.Fatalf("create_refund answered %s (%v)", b, err)
				}
				ids = append(ids, ref.RefundID)
			}
			if got := len(p.Refunds()); got != tc.refunds {
				t.Errorf("refunds made = %d, want %d", got, tc.refunds)
			}
			if same := ids[0] == ids[1]; same != (tc.refunds == 1) {
				t.Errorf("the two answers' refund ids %v: the same %v, want %v", ids, same, tc.refunds == 1)
			}
		})
	}
}
