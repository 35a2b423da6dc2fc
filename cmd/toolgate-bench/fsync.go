package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// fsyncFigures is the disk's flush time, measured where the load
// comparison keeps toolgate's SQLite file: the floor under a durable
// write (the default durability makes two of them per write call).
type fsyncFigures struct {
	Dir   string  `json:"dir"`
	Syncs int     `json:"syncs"`
	Bytes int     `json:"bytes_per_sync"`
	P50us float64 `json:"p50_us"`
	P90us float64 `json:"p90_us"`
	P99us float64 `json:"p99_us"`
}

// measureFsync writes 4 KiB and fsyncs (os.File.Sync, as the SQLite
// store's WAL sync does), n times, cycling over the first 64 blocks of a
// fresh file in dir, as a WAL's frames are rewritten after a checkpoint.
func measureFsync(ctx context.Context, dir string, n int) (*fsyncFigures, error) {
	f, err := os.CreateTemp(dir, "fsync-*.bin")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	const block = 4096
	buf := make([]byte, block)
	for i := range buf {
		buf[i] = byte(i)
	}
	lat := make([]time.Duration, 0, n)
	for i := range n {
		if i%256 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		buf[0] = byte(i)
		start := time.Now()
		if _, err := f.WriteAt(buf, int64(i%64)*block); err != nil {
			return nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("fsync %s: %w", f.Name(), err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Nanoseconds()) / 1000 }
	abs, _ := filepath.Abs(dir)
	return &fsyncFigures{Dir: abs, Syncs: n, Bytes: block, P50us: pct(0.50), P90us: pct(0.90), P99us: pct(0.99)}, nil
}
