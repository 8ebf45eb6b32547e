package docs_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// linkTarget finds the target of a Markdown link or image: [text](target).
var linkTarget = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestGuidesLinksResolve: every relative link and image of the README and
// the guides names a file of the repository, and a link to a heading
// (#anchor) names a heading of that file, as GitHub makes its anchors.
// The guides moved out of the README, and a link left behind fails here.
func TestGuidesLinksResolve(t *testing.T) {
	files, err := guides(root)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{} // file → its headings' anchors
	for _, file := range files {
		for _, l := range markdownLines(t, filepath.Join(root, file)) {
			for _, m := range linkTarget.FindAllStringSubmatch(l.text, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				dest := filepath.Join(root, filepath.Dir(file), path)
				if path == "" {
					dest = filepath.Join(root, file)
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d: the link %s names no file: %v", file, l.n, target, err)
					continue
				}
				if anchor == "" {
					continue
				}
				if anchors[dest] == nil {
					anchors[dest] = headingAnchors(t, dest)
				}
				if !anchors[dest][anchor] {
					t.Errorf("%s:%d: the link %s names no heading of %s", file, l.n, target, filepath.Base(dest))
				}
			}
		}
	}
}

type markdownLine struct {
	n    int
	text string
}

// markdownLines returns a Markdown file's lines outside fenced blocks.
func markdownLines(t *testing.T, path string) []markdownLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []markdownLine
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20) // the performance table's rows are long
	for n := 1; sc.Scan(); n++ {
		if strings.HasPrefix(strings.TrimSpace(sc.Text()), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, markdownLine{n, sc.Text()})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// headingAnchors returns the anchors GitHub gives a file's headings:
// lower case, spaces as hyphens, other punctuation dropped.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	anchors := map[string]bool{}
	for _, l := range markdownLines(t, path) {
		title, isHeading := strings.CutPrefix(strings.TrimLeft(l.text, "#"), " ")
		if !isHeading || !strings.HasPrefix(l.text, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(title)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	}
	return anchors
}
