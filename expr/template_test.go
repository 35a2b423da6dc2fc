package expr

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/types"
)

func TestTemplateRender(t *testing.T) {
	vars := &Vars{
		Args: mustObject(t, `{"order_id":"ORD-4471","amount_paise":425000,"big":9007199254740993,
			"price":1.50,"tags":["a","b"],"addr":{"city":"Pune","zip":411001},"ok":true,"none":null,
			"items":[{"sku":"X-1"}]}`),
		Principal: &types.Principal{
			ID:     "cust_42",
			Limits: map[string]json.Number{"max_refund_paise": "500000"},
			Attrs:  map[string]any{"tier": "gold", "region": map[string]any{"code": "IN"}},
		},
		RunID: "r1", CallID: "toolu_1", Tool: "issue_refund",
	}
	tests := []struct {
		name, src, want string
	}{
		{"contract key", "refund:{order_id}:{amount_paise}:{run_id}", "refund:ORD-4471:425000:r1"},
		{"args form", "{args.order_id}/{args.addr.city}", "ORD-4471/Pune"},
		{"big integer literal", "{big}", "9007199254740993"},
		{"decimal literal kept", "{price}", "1.50"},
		{"array as JSON", "{tags}", `["a","b"]`},
		{"object as canonical JSON", "{addr}", `{"city":"Pune","zip":411001}`},
		{"bool and null", "{ok} {none}", "true null"},
		{"array index", "{args.items.0.sku}", "X-1"},
		{"principal", "{principal.id} {principal.limits.max_refund_paise} {principal.attrs.tier} {principal.attrs.region.code}", "cust_42 500000 gold IN"},
		{"ids", "{run_id}/{call_id}/{tool}", "r1/toolu_1/issue_refund"},
		{"spaces inside braces", "{ order_id }", "ORD-4471"},
		{"escaped braces", "{{literal}} {order_id}", "{literal} ORD-4471"},
		{"no placeholders", "plain text", "plain text"},
		{"empty", "", ""},
		{"contract message", "Refund of {args.amount_paise} paise exceeds the {principal.limits.max_refund_paise} paise limit.",
			"Refund of 425000 paise exceeds the 500000 paise limit."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := ParseTemplate(tt.src)
			if err != nil {
				t.Fatalf("ParseTemplate(%q): %v", tt.src, err)
			}
			got, err := tmpl.Render(vars)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if got != tt.want {
				t.Errorf("Render = %q, want %q", got, tt.want)
			}
			if loose := tmpl.MustRenderLoose(vars); loose != tt.want {
				t.Errorf("MustRenderLoose = %q, want %q", loose, tt.want)
			}
			if tmpl.String() != tt.src {
				t.Errorf("String() = %q, want %q", tmpl.String(), tt.src)
			}
		})
	}
}

func TestTemplateMissing(t *testing.T) {
	vars := &Vars{
		Args:      map[string]any{"order_id": "ORD-1", "tags": []any{"a"}},
		Principal: &types.Principal{ID: "p1"},
	}
	tests := []struct {
		name, src, wantErr, wantLoose string
	}{
		{"missing arg", "refund:{order_id}:{amount_paise}", "{amount_paise}", "refund:ORD-1:?"},
		{"missing nested", "{args.addr.city}", "{args.addr.city}", "?"},
		{"index out of range", "{args.tags.3}", "{args.tags.3}", "?"},
		{"field of a string", "{args.order_id.x}", "{args.order_id.x}", "?"},
		{"missing limit", "max {principal.limits.max_refund_paise}", "{principal.limits.max_refund_paise}", "max ?"},
		{"missing attr", "{principal.attrs.tier}", "{principal.attrs.tier}", "?"},
		{"empty run id", "{run_id}", "{run_id}", "?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := ParseTemplate(tt.src)
			if err != nil {
				t.Fatalf("ParseTemplate: %v", err)
			}
			_, err = tmpl.Render(vars)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Render error = %v, want one naming %s", err, tt.wantErr)
			}
			if got := tmpl.MustRenderLoose(vars); got != tt.wantLoose {
				t.Errorf("MustRenderLoose = %q, want %q", got, tt.wantLoose)
			}
		})
	}
	tmpl, _ := ParseTemplate("{principal.id}:{order_id}")
	if _, err := tmpl.Render(nil); err == nil {
		t.Error("Render(nil) succeeded, want an error")
	}
	if got := tmpl.MustRenderLoose(&Vars{}); got != "?:?" {
		t.Errorf("MustRenderLoose(no principal) = %q", got)
	}
}

func TestParseTemplateErrors(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{"{state.x}", "unknown placeholder {state.x}"},
		{"{principal}", "unknown placeholder {principal}"},
		{"{principal.name}", "unknown placeholder {principal.name}"},
		{"{principal.limits}", "unknown placeholder {principal.limits}"},
		{"{principal.limits.a.b}", "unknown placeholder {principal.limits.a.b}"},
		{"{args}", "unknown placeholder {args}"},
		{"{run_id.x}", "unknown placeholder {run_id.x}"},
		{"{foo.bar}", "unknown placeholder {foo.bar}"},
		{"{}", "empty placeholder"},
		{"{a b}", "invalid placeholder {a b}"},
		{"{args..x}", "invalid placeholder {args..x}"},
		{"key:{order_id", "unclosed { at byte 4"},
		{"{a{b}}", "unclosed { at byte 0"},
		{"a}b", "unmatched } at byte 1"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, err := ParseTemplate(tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseTemplate(%q) error = %v, want %q", tt.src, err, tt.want)
			}
		})
	}
}

func TestTemplatePlaceholders(t *testing.T) {
	tmpl, err := ParseTemplate("{order_id}:{args.addr.city}:{run_id}:{order_id}:{principal.limits.max}:{args.order_id}")
	if err != nil {
		t.Fatal(err)
	}
	wantPH := []string{"order_id", "args.addr.city", "run_id", "principal.limits.max", "args.order_id"}
	if got := tmpl.Placeholders(); !reflect.DeepEqual(got, wantPH) {
		t.Errorf("Placeholders() = %q, want %q", got, wantPH)
	}
	wantArgs := []string{"order_id", "addr"}
	if got := tmpl.Args(); !reflect.DeepEqual(got, wantArgs) {
		t.Errorf("Args() = %q, want %q", got, wantArgs)
	}
}

// TestRenderEscapedIsInjective: a quota key's parts cannot run into each
// other. Rendered plainly, alice:ORD with order 1 and alice with order ORD:1
// make one key (and shared one counter); escaped, they make two.
func TestRenderEscapedIsInjective(t *testing.T) {
	tmpl, err := ParseTemplate("{principal.id}:{args.order_id}")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id, order, want string
	}{
		{"alice:ORD", "1", "alice%3AORD:1"},
		{"alice", "ORD:1", "alice:ORD%3A1"},
		{"bob%3A", "2", "bob%253A:2"},
		{"cust_42", "ORD-8", "cust_42:ORD-8"},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		got, err := tmpl.RenderEscaped(&Vars{Principal: &types.Principal{ID: tt.id}, Args: map[string]any{"order_id": tt.order}})
		if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("%s + %s: got %q, want %q", tt.id, tt.order, got, tt.want)
		}
		if prev, ok := seen[got]; ok {
			t.Errorf("%s + %s and %s render the same key %q", tt.id, tt.order, prev, got)
		}
		seen[got] = tt.id + " + " + tt.order
	}
	for src, want := range map[string]bool{"{a}:{b}": true, "{a}{b}": false, "k-{a}": true} {
		tm, err := ParseTemplate(src)
		if err != nil {
			t.Fatal(err)
		}
		if tm.Separated() != want {
			t.Errorf("%s: Separated() = %v, want %v", src, !want, want)
		}
	}
}
