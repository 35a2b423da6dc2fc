package bench_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/config"
	"github.com/toolgate/toolgate/store"
	"github.com/toolgate/toolgate/store/sqlite"
	"github.com/toolgate/toolgate/types"
)

// The history BenchmarkHistory seeds: historyRows execution rows (and as
// many completed operations), historySteps of them on the run the calls
// go to, the rest spread over runs of historyRunSteps calls each.
const (
	historyRows     = 10_000_000
	historySteps    = 1_000_000
	historyRunSteps = 1_000
	// historyRun is the run every benchmarked call goes to.
	historyRun = "hot"
)

// historyEnv names a SQLite file BenchmarkHistory seeds when absent and
// reuses when present, so that the seeding (about a minute) is paid once
// across runs. Unset, the file is seeded into a temporary directory once
// per test binary.
const historyEnv = "TOOLGATE_BENCH_HISTORY_DB"

// historyNext numbers the benchmarked calls from a random start, so that
// no call repeats an operation of an earlier one, even one of an earlier
// process on a reused file (a repeat would be a replay: no admission, no
// fsync).
var historyNext = func() *atomic.Int64 {
	var n atomic.Int64
	n.Store(rand.Int64N(1 << 52))
	return &n
}()

// BenchmarkHistory is one call at one caller through the whole pipeline on
// a SQLite file (the default durability), side by side: on a fresh file
// and run ("fresh"), and on a run at step 1,000,000 in a file holding 10
// million execution rows and 10 million completed operations ("history").
// A call should cost the same on both: nothing on the hot path may scan
// what the run or the store has recorded before.
func BenchmarkHistory(b *testing.B) {
	seeded := seededHistory(b)
	for _, effect := range []types.Effect{types.EffectWrite, types.EffectRead} {
		b.Run(string(effect), func(b *testing.B) {
			b.Run("fresh", func(b *testing.B) {
				// Beside the seeded file: the same file system and directory.
				dir, err := os.MkdirTemp(filepath.Dir(seeded), "fresh-")
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { os.RemoveAll(dir) })
				path := filepath.Join(dir, "toolgate.db")
				gw := openHistoryGateway(b, path)
				if _, err := gw.StartRun(b.Context(), toolgate.RunOptions{ID: historyRun, Principal: toolgate.Principal{ID: "u"}}); err != nil {
					b.Fatal(err)
				}
				measureHistoryCalls(b, gw, string(effect))
			})
			b.Run("history", func(b *testing.B) {
				measureHistoryCalls(b, openHistoryGateway(b, seeded), string(effect))
			})
		})
	}
}

// measureHistoryCalls makes b.N calls of tool on the hot run, one at a
// time, each with arguments no call had before.
func measureHistoryCalls(b *testing.B, gw *toolgate.Gateway, tool string) {
	ctx := b.Context()
	call := func() {
		args := json.RawMessage(fmt.Sprintf(`{"n":%d}`, historyNext.Add(1)))
		res, err := gw.Do(ctx, &toolgate.Call{RunID: historyRun, Tool: tool, Args: args, CallID: "c"})
		switch {
		case err != nil:
		case !res.OK:
			err = fmt.Errorf("%s: %s: %s", tool, res.Error.Code, res.Error.Message)
		case res.Meta.Replayed:
			err = fmt.Errorf("%s %s: replayed, not a new call", tool, args)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	call() // the run into the gateway's cache, the statements prepared
	for b.Loop() {
		call()
	}
}

// historyConfig has a write and a read tool, each a Go function that
// answers at once.
func historyConfig() *config.Config {
	schema := map[string]any{"type": "object", "required": []any{"n"},
		"properties": map[string]any{"n": map[string]any{"type": "integer"}}}
	answer := func(ctx context.Context, args json.RawMessage) (any, error) {
		return json.RawMessage(`{"recorded":true}`), nil
	}
	return &config.Config{Tools: map[string]*config.Tool{
		string(types.EffectWrite): {Description: "Records one thing.", Effect: types.EffectWrite, InputSchema: schema, Func: answer},
		string(types.EffectRead):  {Description: "Reads one thing.", Effect: types.EffectRead, InputSchema: schema, Func: answer},
	}}
}

// openHistoryGateway opens a gateway on the SQLite file at path, closed
// when b ends.
func openHistoryGateway(b testing.TB, path string) *toolgate.Gateway {
	gw, closeAll, err := openGateway(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := closeAll(); err != nil {
			b.Error(err)
		}
	})
	return gw
}

// openGateway opens a gateway of historyConfig on the SQLite file at path
// and a function that closes both.
func openGateway(path string) (*toolgate.Gateway, func() error, error) {
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{Owner: "bench"})
	if err != nil {
		return nil, nil, err
	}
	gw, err := toolgate.Open(context.Background(), toolgate.Options{Config: historyConfig(), Store: s, Owner: "bench",
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return gw, func() error {
		gw.Close()
		if err := s.Close(); err != nil && !errors.Is(err, store.ErrClosed) {
			return err
		}
		return nil
	}, nil
}

var (
	historyOnce sync.Once
	historyPath string
	historyErr  error
	// historyTemp is the temporary directory of a seeded file, removed by
	// TestMain.
	historyTemp string
)

// seededHistory is the path of the seeded file, seeding it on first use.
func seededHistory(b *testing.B) string {
	historyOnce.Do(func() {
		historyPath = os.Getenv(historyEnv)
		if historyPath == "" {
			if historyTemp, historyErr = os.MkdirTemp("", "toolgate-bench-history-"); historyErr != nil {
				return
			}
			historyPath = filepath.Join(historyTemp, "toolgate.db")
		} else if _, err := os.Stat(historyPath); err == nil {
			return
		}
		began := time.Now()
		// Seeded under another name and renamed once complete, so that an
		// interrupted seeding is never reused.
		seeding := historyPath + ".seeding"
		for _, suffix := range []string{"", "-journal", "-wal", "-shm"} {
			os.Remove(seeding + suffix)
		}
		// The file's directory (the user's cache, for make bench) may not
		// exist yet.
		if historyErr = os.MkdirAll(filepath.Dir(historyPath), 0o755); historyErr != nil {
			return
		}
		if historyErr = seedHistory(seeding); historyErr == nil {
			historyErr = os.Rename(seeding, historyPath)
		}
		if historyErr != nil {
			return
		}
		fmt.Fprintf(os.Stderr, "BenchmarkHistory: seeded %d execution rows and operations into %s in %.1fs\n",
			historyRows, historyPath, time.Since(began).Seconds())
	})
	if historyErr != nil {
		b.Fatal(historyErr)
	}
	return historyPath
}

// TestMain removes the seeded file of BenchmarkHistory.
func TestMain(m *testing.M) {
	code := m.Run()
	if historyTemp != "" {
		os.RemoveAll(historyTemp)
	}
	os.Exit(code)
}
