package docs_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// A block is one fenced ```sh block of a guide, with the mark that says
// whether the test runs it.
type block struct {
	file string // as the repository names it, e.g. docs/owners.md
	line int    // the opening fence's line, from 1
	text string // the commands, with a list item's indentation removed
	mark mark
}

func (b block) where() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// A mark is the HTML comment on the last non-blank line before a block
// (invisible where the Markdown is rendered):
//
//	<!-- docs-test: run -->
//	<!-- docs-test: run, any status (why an HTTP error is fine here) -->
//	<!-- docs-test: skip (why this block cannot run in the test) -->
//
// A block without one fails the test: nothing is skipped silently, and a
// block added to a guide is run unless its author says why not.
type mark struct {
	run       bool
	anyStatus bool   // curl's HTTP errors do not fail the block
	reason    string // required for skip and for any status
}

var markLine = regexp.MustCompile(`^<!-- docs-test: (run|run, any status|skip)(?: \((.+)\))? -->$`)

const markPrefix = "<!-- docs-test:"

// parseMark reads a mark line, or says what is wrong with it.
func parseMark(s string) (mark, error) {
	m := markLine.FindStringSubmatch(s)
	if m == nil {
		return mark{}, fmt.Errorf("a docs-test mark must be %q, %q or %q, not %q",
			"<!-- docs-test: run -->", "<!-- docs-test: run, any status (REASON) -->", "<!-- docs-test: skip (REASON) -->", s)
	}
	k := mark{run: m[1] != "skip", anyStatus: m[1] == "run, any status", reason: m[2]}
	if k.reason == "" && m[1] != "run" {
		return mark{}, fmt.Errorf("%q needs a reason in parentheses", s)
	}
	return k, nil
}

// guides lists the files whose blocks the test reads: the README and
// every Markdown file in docs/.
func guides(root string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	out := []string{"README.md"}
	for _, f := range files {
		rel, err := filepath.Rel(root, f)
		if err != nil {
			return nil, err
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}

// readBlocks returns the ```sh blocks of a file, and a problem for every
// block without a valid mark and every mark that precedes no such block.
func readBlocks(root, file string) ([]block, []error) {
	f, err := os.Open(filepath.Join(root, file))
	if err != nil {
		return nil, []error{err}
	}
	defer f.Close()
	var (
		blocks   []block
		problems []error
		lastText string // the last non-blank line outside a block
		lastLine int
		open     *block // the ```sh block being read
		indent   string
		inFence  bool // inside any fenced block
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		raw := sc.Text()
		trimmed := strings.TrimSpace(raw)
		if inFence {
			if trimmed == "```" {
				if open != nil {
					blocks = append(blocks, *open)
					open = nil
				}
				inFence = false
				continue
			}
			if open != nil {
				open.text += strings.TrimPrefix(raw, indent) + "\n"
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") {
			inFence = true
			isSh := strings.TrimSpace(strings.TrimPrefix(trimmed, "```")) == "sh"
			marked := strings.HasPrefix(lastText, markPrefix)
			switch {
			case isSh && !marked:
				problems = append(problems, fmt.Errorf("%s:%d: a sh block without a mark: put %q (or run, any status) on the line before it", file, n, "<!-- docs-test: skip (REASON) -->"))
			case isSh:
				k, err := parseMark(lastText)
				if err != nil {
					problems = append(problems, fmt.Errorf("%s:%d: %w", file, lastLine, err))
					break
				}
				open = &block{file: file, line: n, mark: k}
				indent = raw[:len(raw)-len(strings.TrimLeft(raw, " "))]
			case marked:
				problems = append(problems, fmt.Errorf("%s:%d: a docs-test mark before a block that is not sh", file, lastLine))
			}
			lastText = ""
			continue
		}
		if trimmed == "" {
			continue
		}
		if strings.HasPrefix(lastText, markPrefix) {
			problems = append(problems, fmt.Errorf("%s:%d: a docs-test mark that no sh block follows", file, lastLine))
		}
		lastText, lastLine = trimmed, n
	}
	if err := sc.Err(); err != nil {
		problems = append(problems, err)
	}
	if strings.HasPrefix(lastText, markPrefix) {
		problems = append(problems, fmt.Errorf("%s:%d: a docs-test mark that no sh block follows", file, lastLine))
	}
	if inFence {
		problems = append(problems, fmt.Errorf("%s: a fenced block is not closed", file))
	}
	return blocks, problems
}
