package sqlq

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store"
)

// errNoRow is fakeSums's driver error for no row.
var errNoRow = errors.New("no row")

// fakeSums answers CheckQuotas's sums from a table and records the
// queries asked.
type fakeSums struct {
	used  map[string]int64 // by quota
	frees map[string]int64 // by quota; absent: no row
	asked []string
}

func (f *fakeSums) sum(d *Dialect) SumRow {
	return func(query string, args []any, dest *int64) error {
		quota := args[0].(string)
		switch query {
		case d.queries.quotaUsed:
			f.asked = append(f.asked, "used "+quota)
			*dest = f.used[quota]
			return nil
		case d.queries.quotaFrees:
			f.asked = append(f.asked, "frees "+quota)
			at, ok := f.frees[quota]
			if !ok {
				return errNoRow
			}
			*dest = at
			return nil
		}
		return errors.New("unexpected query " + query)
	}
}

func TestCheckQuotas(t *testing.T) {
	now := time.Unix(1000, 0).UTC()
	claim := func(quota string, amount, limit int64) store.QuotaClaim {
		return store.QuotaClaim{Quota: quota, Key: "k", Amount: amount, Limit: limit, Window: time.Minute}
	}
	tests := []struct {
		name   string
		claims []store.QuotaClaim
		sums   fakeSums
		want   *store.QuotaDenial
		asked  []string
	}{
		{"all fit", []store.QuotaClaim{claim("a", 1, 10), claim("b", 5, 5)},
			fakeSums{used: map[string]int64{"a": 9, "b": 0}}, nil, []string{"used a", "used b"}},
		{"second over, frees later", []store.QuotaClaim{claim("a", 1, 10), claim("b", 2, 5)},
			fakeSums{used: map[string]int64{"a": 0, "b": 4}, frees: map[string]int64{"b": now.Add(-30 * time.Second).UnixNano()}},
			&store.QuotaDenial{Quota: "b", Key: "k", Used: 4, Limit: 5, Amount: 2, FreesAt: now.Add(30 * time.Second)},
			[]string{"used a", "used b", "frees b"}},
		{"over, never frees", []store.QuotaClaim{claim("a", 3, 5)},
			fakeSums{used: map[string]int64{"a": 4}},
			&store.QuotaDenial{Quota: "a", Key: "k", Used: 4, Limit: 5, Amount: 3}, []string{"used a", "frees a"}},
		{"amount above the limit: no frees asked", []store.QuotaClaim{claim("a", 6, 5), claim("b", 1, 1)},
			fakeSums{used: map[string]int64{"a": 0}},
			&store.QuotaDenial{Quota: "a", Key: "k", Used: 0, Limit: 5, Amount: 6}, []string{"used a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, d := range []*Dialect{SQLite, PostgreSQL} {
				sums := tt.sums
				sums.asked = nil
				got, err := d.CheckQuotas(tt.claims, now, sums.sum(d), errNoRow)
				if err != nil {
					t.Fatalf("%s: %v", d.Name, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: denial %+v, want %+v", d.Name, got, tt.want)
				}
				if !reflect.DeepEqual(sums.asked, tt.asked) {
					t.Errorf("%s: asked %v, want %v", d.Name, sums.asked, tt.asked)
				}
			}
		})
	}
}

func TestCheckQuotasError(t *testing.T) {
	boom := errors.New("boom")
	_, err := SQLite.CheckQuotas([]store.QuotaClaim{{Quota: "a", Amount: 1, Limit: 1}}, time.Unix(0, 0),
		func(string, []any, *int64) error { return boom }, errNoRow)
	if !errors.Is(err, boom) {
		t.Fatalf("CheckQuotas = %v, want the sum's error", err)
	}
}
