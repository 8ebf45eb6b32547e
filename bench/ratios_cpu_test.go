package main

import (
	"os"
	"testing"
	"time"
)

func TestMetricValue(t *testing.T) {
	t.Parallel()
	exposition := []byte("# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n" +
		"# TYPE process_cpu_seconds_total counter\n" +
		"process_cpu_seconds_total_extra 9\n" +
		"process_cpu_seconds_total 12.34\n" +
		"process_open_fds 10\n")
	if v, ok := metricValue(exposition, "process_cpu_seconds_total"); !ok || v != 12.34 {
		t.Errorf("got %v, %v; want 12.34", v, ok)
	}
	if _, ok := metricValue(exposition, "process_resident_memory_bytes"); ok {
		t.Error("a metric that is not there was read")
	}
}

// This process's CPU, read as the bare server's is, grows with the work
// it does.
func TestProcessCPUGrowsWithWork(t *testing.T) {
	t.Parallel()
	before, ok := processCPU(os.Getpid())
	if !ok {
		t.Fatal("no /proc/PID/stat to read the bare server's CPU from")
	}
	for start := time.Now(); time.Since(start) < 100*time.Millisecond; {
	}
	after, _ := processCPU(os.Getpid())
	if after <= before {
		t.Errorf("CPU %v s after 100 ms of spinning, %v s before", after, before)
	}
}

func TestCPUPerRequest(t *testing.T) {
	t.Parallel()
	r := &result{}
	r.Total.Requests, r.Total.Errors = 1010, 10
	if got := cpuPerRequest(r, 1.5, 1.52, true); got < 19.99 || got > 20.01 {
		t.Errorf("0.02 s over 1000 successful requests: %v µs, want 20", got)
	}
	if cpuPerRequest(r, 1.5, 1.52, false) != 0 || cpuPerRequest(&result{}, 1, 2, true) != 0 {
		t.Error("a figure from nothing read, or from no request")
	}
	if got := formatCPU(10, 20); got != "0.50× (10.0 ÷ 20.0 µs)" {
		t.Errorf("formatCPU: %q", got)
	}
}
