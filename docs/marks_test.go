package docs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMarksAreRequired: the reader of the guides refuses what would let a
// block go unchecked without a word, and reads a list item's block.
func TestMarksAreRequired(t *testing.T) {
	const guide = "# A guide\n" +
		"\n" +
		"```sh\n" + // 3: no mark
		"echo unmarked\n" +
		"```\n" +
		"\n" +
		"<!-- docs-test: skip -->\n" + // 7: skip without a reason
		"```sh\n" +
		"echo no reason\n" +
		"```\n" +
		"\n" +
		"<!-- docs-test: run -->\n" + // 12: before a block that is not sh
		"```text\n" +
		"output\n" +
		"```\n" +
		"\n" +
		"<!-- docs-test: run -->\n" + // 17: no block follows
		"Some text.\n" +
		"\n" +
		"1. A step:\n" +
		"\n" +
		"   <!-- docs-test: run, any status (an example's version) -->\n" +
		"   ```sh\n" + // 23: runs, indentation removed
		"   curl -s http://127.0.0.1:8080/v1/me \\\n" +
		"     -H 'Authorization: Bearer awk.…'\n" +
		"   ```\n" +
		"\n" +
		"<!-- docs-test: skip (three machines) -->\n" +
		"```sh\n" + // 29: skipped, with its reason
		"addrwatchd --peers n1=10.0.0.5:7000\n" +
		"```\n"
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "guide.md"), []byte(guide), 0o600); err != nil {
		t.Fatal(err)
	}
	blocks, problems := readBlocks(dir, "guide.md")
	want := []string{
		"guide.md:3: a sh block without a mark",
		"guide.md:7: \"<!-- docs-test: skip -->\" needs a reason",
		"guide.md:12: a docs-test mark before a block that is not sh",
		"guide.md:17: a docs-test mark that no sh block follows",
	}
	if len(problems) != len(want) {
		t.Fatalf("problems %q, want %d: %q", problems, len(want), want)
	}
	for i, p := range problems {
		if !strings.HasPrefix(p.Error(), want[i]) {
			t.Errorf("problem %d is %q, want it to start %q", i, p, want[i])
		}
	}
	if len(blocks) != 2 {
		t.Fatalf("blocks %+v, want the list item's and the skipped one", blocks)
	}
	item := blocks[0]
	if item.line != 23 || !item.mark.run || !item.mark.anyStatus || item.mark.reason != "an example's version" {
		t.Errorf("the list item's block is %+v", item)
	}
	if want := "curl -s http://127.0.0.1:8080/v1/me \\\n  -H 'Authorization: Bearer awk.…'\n"; item.text != want {
		t.Errorf("the list item's block reads %q, want %q", item.text, want)
	}
	if skip := blocks[1]; skip.line != 29 || skip.mark.run || skip.mark.reason != "three machines" {
		t.Errorf("the skipped block is %+v", skip)
	}
}
