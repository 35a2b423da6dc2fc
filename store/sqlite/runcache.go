package sqlite

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/toolgate/toolgate/types"
)

// runCacheSize bounds the runs kept; past it the cache starts over.
const runCacheSize = 16384

// runFreshFor is how long after the writer last checked that no other
// process wrote to the file the cache is trusted: a run changed by
// another process (toolgate reconcile) is seen by GetRun within this
// time, or with the writer's next transaction, whichever comes first.
const runFreshFor = 250 * time.Millisecond

// runCache keeps the runs this process reads, decoded, so that GetRun,
// which every call makes, costs no query and no decoding of the principal.
// It is exact for this process's own writes: the writer applies each of
// them to the cache after its COMMIT, in commit order (the only writes to
// a run are CreateRun, a step taken, and Commit). Writes by other
// processes are noticed by the writer through PRAGMA data_version at the
// start of each transaction, and empty the cache; between two of those
// checks, and for at most runFreshFor after the last one, the cache may
// miss such a write, as a call that read the run just before it would.
//
// An entry may know a run's latest version and step without the run (a
// write it could not apply, for a run it did not hold): a run read from
// the file is kept only if it is at least that new, so that a read that
// raced a write never puts an older run back.
type runCache struct {
	mu        sync.Mutex
	runs      map[string]*cachedRun
	epoch     uint64    // bumped by clear: reads begun before are not kept
	checkedAt time.Time // when the writer last found no foreign write (wall clock: not the store's)
}

// cachedRun is a run as of (version, step); run is nil when only those
// are known.
type cachedRun struct {
	run           *types.Run
	version, step int64
}

func newRunCache() *runCache {
	return &runCache{runs: make(map[string]*cachedRun)}
}

// get returns a copy of the run, or nil, and the epoch to give fill.
func (c *runCache) get(id string) (*types.Run, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.checkedAt) > runFreshFor {
		return nil, c.epoch
	}
	if e := c.runs[id]; e != nil && e.run != nil {
		return copyRun(e.run), c.epoch
	}
	return nil, c.epoch
}

// fill keeps a run read from the file under epoch, unless the cache was
// cleared since or knows a newer state of it.
func (c *runCache) fill(run *types.Run, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if epoch != c.epoch {
		return
	}
	if e := c.runs[run.ID]; e != nil && (run.Version < e.version || run.Step < e.step ||
		(e.run != nil && run.Version == e.version && run.Step == e.step)) {
		return
	}
	c.put(run.ID, &cachedRun{run: copyRun(run), version: run.Version, step: run.Step})
}

// stepped records a step the writer took (AdmitStep).
func (c *runCache) stepped(id string, step int64, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.runs[id]
	switch {
	case e == nil:
		c.put(id, &cachedRun{version: -1, step: step})
	case e.run == nil:
		e.step = max(e.step, step)
	case step > e.step:
		r := *e.run
		r.Step, r.UpdatedAt = step, at
		e.run, e.step = &r, step
	}
}

// committed records a Commit the writer made: the run's new version, its
// new state (nil when unchanged) and the step taken (0 when none).
func (c *runCache) committed(id string, version int64, state json.RawMessage, step int64, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.runs[id]
	switch {
	case e == nil:
		c.put(id, &cachedRun{version: version, step: step})
	case e.run == nil || e.version != version-1:
		// Not the version before: a commit this cache has not seen.
		e.run, e.version, e.step = nil, max(e.version, version), max(e.step, step)
	default:
		r := *e.run
		r.Version, r.UpdatedAt = version, at
		if state != nil {
			r.State = state
		}
		if step > r.Step {
			r.Step = step
		}
		e.run, e.version, e.step = &r, version, r.Step
	}
}

// checked records that the writer found no foreign write at now; foreign
// says it found one, and the cache starts over.
func (c *runCache) checked(foreign bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if foreign {
		c.clearLocked()
	}
	c.checkedAt = time.Now()
}

func (c *runCache) put(id string, e *cachedRun) {
	if len(c.runs) >= runCacheSize {
		c.clearLocked()
	}
	c.runs[id] = e
}

func (c *runCache) clearLocked() {
	clear(c.runs)
	c.epoch++
}

// copyRun copies a run deeply enough that its user may change it: the
// principal's containers and the JSON documents.
func copyRun(r *types.Run) *types.Run {
	c := *r
	c.Principal = r.Principal.Clone()
	c.State = append(json.RawMessage(nil), r.State...)
	c.InitialState = append(json.RawMessage(nil), r.InitialState...)
	return &c
}
