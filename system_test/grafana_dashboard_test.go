package system_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The Grafana dashboard in deploy/grafana queries only metrics the server
// exports: every metric a panel's PromQL names is on some node's /metrics
// of a three-node cluster that has served a few writes.

const dashboardPath = "../deploy/grafana/addrwatch-cluster.json"

// promQLWords are the PromQL words that are not metric names.
var promQLWords = map[string]bool{
	"rate": true, "irate": true, "increase": true, "delta": true, "deriv": true, "sum": true, "avg": true, "min": true,
	"max": true, "count": true, "by": true, "without": true, "histogram_quantile": true, "on": true, "ignoring": true,
	"group_left": true, "group_right": true, "bool": true, "and": true, "or": true, "unless": true, "offset": true,
	"abs": true, "clamp_min": true, "clamp_max": true, "topk": true, "bottomk": true, "avg_over_time": true, "max_over_time": true,
}

var (
	promLabelSets = regexp.MustCompile(`\{[^}]*\}`)
	promGrouping  = regexp.MustCompile(`\b(by|without|on|ignoring)\s*\([^)]*\)`)
	promRanges    = regexp.MustCompile(`\[[^\]]*\]`)
	promStrings   = regexp.MustCompile(`"[^"]*"`)
	promWords     = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
)

// promMetricNames returns the metric names a PromQL expression reads.
func promMetricNames(expr string) []string {
	for _, strip := range []*regexp.Regexp{promStrings, promLabelSets, promGrouping, promRanges} {
		expr = strip.ReplaceAllString(expr, " ")
	}
	var names []string
	for _, w := range promWords.FindAllString(expr, -1) {
		if !promQLWords[w] {
			names = append(names, w)
		}
	}
	return names
}

// dashboardMissing returns the metric names the expressions read that are
// not in exported.
func dashboardMissing(exprs []string, exported map[string]bool) []string {
	var missing []string
	for _, e := range exprs {
		for _, name := range promMetricNames(e) {
			if !exported[name] && !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
		}
	}
	return missing
}

func TestGrafanaDashboardQueriesExportedMetrics(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(dashboardPath)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil || len(dash.Panels) == 0 {
		t.Fatalf("the dashboard does not parse: %v", err)
	}
	var exprs []string
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	// The check itself: a made-up metric is caught, a PromQL word is not.
	if got := dashboardMissing([]string{`sum by (instance) (rate(made_up_total{job="x"}[5m])) / rate(addrwatch_raft_term[1m])`}, map[string]bool{"addrwatch_raft_term": true}); !slices.Equal(got, []string{"made_up_total"}) {
		t.Fatalf("the checker found %q", got)
	}

	nodes := startCluster(t, 3)
	leader, followers := leaderAndFollowers(t, nodes)
	a := leader.createAccount(t, "extended")
	key := followers[0].createKey(t, a, "write")
	for i := range 5 {
		do(t, "POST", followers[i%2].URL+"/v1/portfolio/cards", key, map[string]any{"address": owAddress(800 + i)})
		do(t, "GET", leader.URL+"/v1/me", key, nil)
	}
	time.Sleep(1500 * time.Millisecond) // heartbeats and a second of samples
	exported := map[string]bool{}
	for _, s := range nodes {
		r := do(t, "GET", s.AdminURL+"/metrics", s.AdminToken, nil)
		expect(t, r, http.StatusOK, "")
		sc := bufio.NewScanner(bytes.NewReader(r.Body))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			name := line[:strings.IndexAny(line, "{ ")]
			exported[name] = true
		}
	}
	if missing := dashboardMissing(exprs, exported); len(missing) > 0 {
		t.Fatalf("the dashboard queries metrics no node exports: %q", missing)
	}
	t.Logf("%d panels, %d queries, all naming exported metrics", len(dash.Panels), len(exprs))
}
