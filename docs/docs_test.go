// Package docs_test runs the guides' shell blocks: every ```sh block of
// README.md and docs/*.md carries a mark that says whether it runs on one
// machine in a test, and the ones that do are run against a node started
// as `make run` starts it. docs/testing.md says how to mark a block.
package docs_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// root is the repository, from this package's directory.
const root = ".."

func TestGuidesShellBlocks(t *testing.T) {
	files, err := guides(root)
	if err != nil {
		t.Fatal(err)
	}
	var runs []block
	skips := map[string][]string{} // reason → where
	for _, file := range files {
		blocks, problems := readBlocks(root, file)
		for _, p := range problems {
			t.Error(p)
		}
		for _, b := range blocks {
			if b.mark.run {
				runs = append(runs, b)
			} else {
				skips[b.mark.reason] = append(skips[b.mark.reason], b.where())
			}
		}
	}
	reasons := make([]string, 0, len(skips))
	skipped := 0
	for r, where := range skips {
		reasons = append(reasons, r)
		skipped += len(where)
	}
	sort.Strings(reasons)
	t.Logf("%d blocks to run, %d skipped:", len(runs), skipped)
	for _, r := range reasons {
		t.Logf("  skipped (%s): %s", r, strings.Join(skips[r], ", "))
	}
	if len(runs) == 0 {
		t.Fatal("no block is marked run: the test would check nothing")
	}
	if t.Failed() {
		return
	}
	if testing.Short() {
		t.Skipf("-short: the marks are checked; the %d blocks that run need a server", len(runs))
	}
	sb := newSandbox(t, root)
	for _, b := range runs {
		t.Run(strings.ReplaceAll(fmt.Sprintf("%s:%d", b.file, b.line), "/", "_"), func(t *testing.T) {
			sb.run(t, b)
		})
	}
}
