package memory

import (
	"context"
	"sort"
	"time"

	"github.com/toolgate/toolgate/store"
)

type statsKey struct {
	tool, replica string
	start         int64
}

// SaveStats inserts or replaces buckets by (tool, start, replica).
func (s *Store) SaveStats(ctx context.Context, buckets []store.StatsBucket) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return err
	}
	if s.stats == nil {
		s.stats = map[statsKey]store.StatsBucket{}
	}
	for _, b := range buckets {
		b.Data = append([]byte(nil), b.Data...)
		b.Start = b.Start.UTC()
		s.stats[statsKey{b.Tool, b.Replica, b.Start.UnixNano()}] = b
	}
	return nil
}

// LoadStats returns copies of the buckets that start at or after since.
func (s *Store) LoadStats(ctx context.Context, since time.Time) ([]store.StatsBucket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.usable(ctx); err != nil {
		return nil, err
	}
	var out []store.StatsBucket
	for _, b := range s.stats {
		if !b.Start.Before(since) {
			b.Data = append([]byte(nil), b.Data...)
			out = append(out, b)
		}
	}
	sortBuckets(out)
	return out, nil
}

func sortBuckets(b []store.StatsBucket) {
	sort.Slice(b, func(i, j int) bool {
		if !b[i].Start.Equal(b[j].Start) {
			return b[i].Start.Before(b[j].Start)
		}
		if b[i].Tool != b[j].Tool {
			return b[i].Tool < b[j].Tool
		}
		return b[i].Replica < b[j].Replica
	})
}

func (s *Store) pruneStats(cutoff time.Time) int64 {
	var n int64
	for k, b := range s.stats {
		if b.Start.Before(cutoff) {
			delete(s.stats, k)
			n++
		}
	}
	return n
}
