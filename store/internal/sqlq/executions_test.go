package sqlq

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/types"
)

func TestListExecutionsQuery(t *testing.T) {
	since := time.Unix(0, 1000).UTC()
	tests := []struct {
		name     string
		f        types.ExecutionFilter
		postgres string // the query after the column list
		sqlite   string
		args     []any
	}{
		{"no filter", types.ExecutionFilter{},
			` FROM executions ORDER BY id DESC LIMIT $1`,
			` FROM executions ORDER BY id DESC LIMIT ?`,
			[]any{100}},
		{"run ascending", types.ExecutionFilter{RunID: "r", Ascending: true, Limit: 5},
			` FROM executions WHERE run_id = $1 ORDER BY version, id LIMIT $2`,
			` FROM executions WHERE run_id = ? ORDER BY version, id LIMIT ?`,
			[]any{"r", 5}},
		{"every filter", types.ExecutionFilter{RunID: "r", Tool: "t", Owner: "o", Since: since, Code: "busy",
			Until: since.Add(time.Microsecond), BeforeID: 9, AfterID: 2, Limit: 7},
			` FROM executions WHERE run_id = $1 AND tool = $2 AND run_id IN (SELECT id FROM runs WHERE owner = $3)` +
				` AND finished_at >= $4 AND code = $5 AND finished_at < $6 AND id < $7 AND id > $8` +
				` ORDER BY version DESC, id DESC LIMIT $9`,
			` FROM executions WHERE run_id = ? AND tool = ? AND run_id IN (SELECT id FROM runs WHERE owner = ?)` +
				` AND finished_at >= ? AND code = ? AND finished_at < ? AND id < ? AND id > ?` +
				` ORDER BY version DESC, id DESC LIMIT ?`,
			[]any{"r", "t", "o", int64(1000), "busy", int64(2000), int64(9), int64(2), 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, d := range []struct {
				dialect *Dialect
				want    string
			}{{PostgreSQL, tt.postgres}, {SQLite, tt.sqlite}} {
				query, args := ListExecutionsQuery(d.dialect, tt.f)
				rest, ok := strings.CutPrefix(query, "SELECT "+ExecutionColumns)
				if !ok || rest != d.want {
					t.Errorf("%s: query\n%s\nwant SELECT <columns>%s", d.dialect.Name, query, d.want)
				}
				if !reflect.DeepEqual(args, tt.args) {
					t.Errorf("%s: args %#v, want %#v", d.dialect.Name, args, tt.args)
				}
			}
		})
	}
}
