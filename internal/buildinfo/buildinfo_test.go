package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// A build from a clone records its commit, the commit's time and whether
// the tree was changed; each reaches the version line and the gauge.
func TestInfoFromAClonesBuild(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/addrwatch/addrwatch", Version: "v0.0.0-20261128133304-a1a95808feae"},
		Settings: []debug.BuildSetting{
			{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"}, {Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "a1a95808feaea2198d7800b0bffb083cc211d702"},
			{Key: "vcs.time", Value: "2026-11-28T13:33:04Z"}, {Key: "vcs.modified", Value: "true"},
		}}
	i := fromBuildInfo(bi)
	want := Info{Version: "v0.0.0-20261128133304-a1a95808feae", Revision: "a1a95808feaea2198d7800b0bffb083cc211d702",
		Time: "2026-11-28T13:33:04Z", Modified: "true", GoVersion: "go1.26.8", Platform: "linux/arm64"}
	if i != want {
		t.Fatalf("got %+v, want %+v", i, want)
	}
	if got := i.String("addrwatchd"); got != "addrwatchd v0.0.0-20261128133304-a1a95808feae (commit a1a95808feaea2198d7800b0bffb083cc211d702, 2026-11-28T13:33:04Z, modified true) go1.26.8 linux/arm64" {
		t.Errorf("the version line: %q", got)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(i.Collector())
	exposition := `# HELP addrwatch_build_info The build of addrwatch this node runs (always 1; the labels say which).
# TYPE addrwatch_build_info gauge
addrwatch_build_info{goversion="go1.26.8",modified="true",platform="linux/arm64",revision="a1a95808feaea2198d7800b0bffb083cc211d702",vcs_time="2026-11-28T13:33:04Z",version="v0.0.0-20261128133304-a1a95808feae"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(exposition), "addrwatch_build_info"); err != nil {
		t.Error(err)
	}
}

// A build without version control information (outside a clone, or with
// -buildvcs=false) says "unknown" rather than printing empty fields.
func TestInfoWithoutVersionControl(t *testing.T) {
	i := fromBuildInfo(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}})
	if i.Revision != "unknown" || i.Time != "unknown" || i.Modified != "unknown" || i.Version != "(devel)" {
		t.Errorf("got %+v", i)
	}
	if !strings.Contains(i.String("addrwatch"), "(commit unknown, unknown, modified unknown)") {
		t.Errorf("the version line: %q", i.String("addrwatch"))
	}
}
