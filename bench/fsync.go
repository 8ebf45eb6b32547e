package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// `bench fsync` measures what one durable append costs on the disk under
// --data: write a 4 KiB record at the end of a file and fsync it, as a log
// store does for every append. Issue 15's one-connection target compares a
// durable write's p50 with two of these (the leader's append, then a
// follower's, in series).

// fsyncRecordBytes is the size of one appended record: about one raft
// entry of a few Sheet upserts.
const fsyncRecordBytes = 4 << 10

// defaultFsyncRequests is how many appends `bench fsync` times.
const defaultFsyncRequests = 2000

func fsyncCommand(cfg *config, stdout, stderr io.Writer) int {
	f, err := os.CreateTemp(cfg.data, ".bench-fsync-*")
	if err != nil {
		fmt.Fprintf(stderr, "bench: fsync: a file under --data %s: %v\n", cfg.data, err)
		return exitFailed
	}
	defer os.Remove(f.Name())
	defer f.Close()
	stats, err := timeAppends(f, cfg.requests)
	if err != nil {
		fmt.Fprintf(stderr, "bench: fsync: %v\n", err)
		return exitFailed
	}
	s := summarize(stats.hist, stats.max)
	fmt.Fprintf(stdout, "fsync on %s: %s appends of %d bytes, each followed by fsync\n", cfg.data, commas(cfg.requests), fsyncRecordBytes)
	fmt.Fprintf(stdout, "  p50 %s  p90 %s  p99 %s  max %s\n", fmtLatency(s.P50), fmtLatency(s.P90), fmtLatency(s.P99), fmtLatency(s.Max))
	fmt.Fprintf(stdout, "  two in series (a leader's append, then a follower's): p50 %s\n", fmtLatency(2*s.P50))
	return 0
}

// timeAppends appends n records to f, fsyncing after each, and records
// how long each append and its fsync took.
func timeAppends(f *os.File, n int64) (*opStats, error) {
	record := make([]byte, fsyncRecordBytes)
	for i := range record {
		record[i] = byte(i)
	}
	stats := newOpStats()
	for range n {
		start := time.Now()
		if _, err := f.Write(record); err != nil {
			return nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
		stats.record(time.Since(start), "")
	}
	return stats, nil
}
