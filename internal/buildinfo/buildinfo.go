// Package buildinfo says which build of addrwatch is running, from what
// the Go toolchain wrote into the binary (runtime/debug.ReadBuildInfo):
// the module version, the commit it was built from, that commit's time,
// whether the tree had changes not committed, and the Go release.
//
// Nothing is set at link time: a build from a clone of the repository
// says all of it by itself, and two builds of the same commit are the
// same bytes (make release builds twice and compares), which a stamped
// build time would break.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"
)

// Info is what a binary knows of its own build. A field the toolchain did
// not record (a build outside a clone, or with -buildvcs=false) is
// "unknown", so a reader never mistakes an empty string for a value.
type Info struct {
	Version   string // the module's version: a tag, a pseudo-version naming the commit, or (devel)
	Revision  string // the commit
	Time      string // the commit's time, RFC 3339
	Modified  string // "true" when the tree had changes not committed, "false", or "unknown"
	GoVersion string // the Go release that built it
	Platform  string // GOOS/GOARCH
}

const unknown = "unknown"

// Read returns the running binary's Info.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: unknown, Revision: unknown, Time: unknown, Modified: unknown, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	}
	return fromBuildInfo(bi)
}

// fromBuildInfo reads Info out of the toolchain's record.
func fromBuildInfo(bi *debug.BuildInfo) Info {
	i := Info{Version: bi.Main.Version, Revision: unknown, Time: unknown, Modified: unknown, GoVersion: bi.GoVersion}
	if i.Version == "" {
		i.Version = unknown
	}
	var goos, goarch string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Revision = s.Value
		case "vcs.time":
			i.Time = s.Value
		case "vcs.modified":
			i.Modified = s.Value
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	if goos == "" || goarch == "" {
		goos, goarch = runtime.GOOS, runtime.GOARCH
	}
	i.Platform = goos + "/" + goarch
	return i
}

// String is what --version prints: one line a person can read and a
// script can split on its fields.
func (i Info) String(program string) string {
	return fmt.Sprintf("%s %s (commit %s, %s, modified %s) %s %s", program, i.Version, i.Revision, i.Time, i.Modified, i.GoVersion, i.Platform)
}

// LogAttrs are Info's fields for a log line.
func (i Info) LogAttrs() []any {
	return []any{"version", i.Version, "revision", i.Revision, "vcs_time", i.Time, "modified", i.Modified, "go", i.GoVersion, "platform", i.Platform}
}

// Collector is the addrwatch_build_info gauge: always 1, its labels the
// build, so a dashboard can say which nodes run which build (a rolling
// upgrade half done shows as two series).
func (i Info) Collector() prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "addrwatch_build_info",
		Help: "The build of addrwatch this node runs (always 1; the labels say which).",
		ConstLabels: prometheus.Labels{
			"version": i.Version, "revision": i.Revision, "vcs_time": i.Time,
			"modified": i.Modified, "goversion": i.GoVersion, "platform": i.Platform,
		},
	})
	g.Set(1)
	return g
}
