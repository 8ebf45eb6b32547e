package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The servers' CPU per request. Requests per second on a shared machine
// swing from one second to the next with what else runs on it, so each
// read-ratios round also notes how much CPU each server spent per
// successful request: the bare server's from /proc/PID/stat (its process
// is ours), addrwatch's from process_cpu_seconds_total on the admin
// /metrics of the node at --admin. Both are counted in the kernel's clock
// ticks (10 ms), so a run of a few seconds reads them to within a percent.
// Their ratio (bare ÷ addrwatch) is what the throughput ratio would be if
// each server had the same CPU to itself; it moves far less from run to
// run.

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times:
// 100 on every Linux that Go supports.
const clockTicks = 100

// processCPU is the CPU seconds (user and system) process pid has used,
// from /proc/PID/stat; false where there is no /proc.
func processCPU(pid int) (float64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: count the fields
	// after its closing parenthesis. utime and stime are fields 14 and 15.
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return 0, false
	}
	fields := strings.Fields(string(b[end+1:]))
	if len(fields) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return float64(utime+stime) / clockTicks, true
}

// nodeCPU is process_cpu_seconds_total of the node at --admin.
func nodeCPU(e *env) (float64, bool) {
	return adminMetric(e.client, e.cfg, "process_cpu_seconds_total")
}

// adminMetric is the value of an unlabelled metric on the admin /metrics
// of the node at --admin, read with the admin token; false when it could
// not be read.
func adminMetric(c *client, cfg *config, name string) (float64, bool) {
	var resp response
	c.do(&request{method: "GET", url: cfg.admin + "/metrics", bearer: cfg.adminToken}, &resp)
	if resp.err != nil || resp.status != 200 {
		return 0, false
	}
	return metricValue(resp.body, name)
}

// metricValue is the value of an unlabelled metric in a Prometheus text
// exposition.
func metricValue(exposition []byte, name string) (float64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(exposition))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, found := strings.CutPrefix(line, name+" ")
		if !found {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		return v, err == nil
	}
	return 0, false
}

// cpuPerRequest is the CPU µs spent per successful request of r, given
// the CPU seconds before and after it; 0 when either was not read.
func cpuPerRequest(r *result, before, after float64, read bool) float64 {
	ok := r.Total.Requests - r.Total.Errors
	if !read || ok <= 0 || after < before {
		return 0
	}
	return (after - before) * 1e6 / float64(ok)
}

// cpuMeter reads one server's CPU seconds.
type cpuMeter func() (float64, bool)

// measured runs run and returns its result with the server's CPU µs per
// successful request.
func measured(meter cpuMeter, run func() *result) (*result, float64) {
	before, ok1 := meter()
	r := run()
	after, ok2 := meter()
	return r, cpuPerRequest(r, before, after, ok1 && ok2)
}

// formatCPU prints a round's CPU figures, or says they were not read.
func formatCPU(bare, ours float64) string {
	if bare <= 0 || ours <= 0 {
		return "not read"
	}
	return fmt.Sprintf("%.2f× (%.1f ÷ %.1f µs)", bare/ours, bare, ours)
}
