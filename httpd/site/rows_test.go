package site

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/addrwatch/addrwatch/actors"
)

// siteHostileStrings try every way out of text and double-quoted
// attributes.
var siteHostileStrings = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(1)>`,
	`'><svg onload=alert(1)>`,
	`</td></tr></table><b>bold</b>`,
	`&lt;already escaped&gt; &amp; "quotes" 'single'`,
	"tab\tnew\nline",
	`javascript:alert(1)`,
}

// parsedRows parses a table body fragment the way a browser does.
func parsedRows(t *testing.T, fragment string) *html.Node {
	t.Helper()
	table := &html.Node{Type: html.ElementNode, Data: "tbody", DataAtom: atom.Tbody}
	nodes, err := html.ParseFragment(strings.NewReader(fragment), &html.Node{Type: html.ElementNode, Data: "tbody", DataAtom: atom.Tbody})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		table.AppendChild(n)
	}
	return table
}

// walk visits every node under n.
func walk(n *html.Node, visit func(*html.Node)) {
	visit(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, visit)
	}
}

// A hostile name, ID or time comes back from the parsed rows exactly as
// text or as an attribute value, and adds no element or attribute.
func TestPanelRowsKeepHostileStringsText(t *testing.T) {
	for _, hostile := range siteHostileStrings {
		keys := keyRowsHTML([]keyRow{{ID: hostile, Name: hostile, Capability: actors.LevelRead, Prefix: hostile, Created: hostile, LastUsed: hostile}})
		grants := grantRowsHTML([]grantRow{{ID: hostile, Name: hostile, Detail: hostile, KindLabel: "Account card",
			Action: "/access/grants/cards/x", CSRF: hostile, Grant: actors.LevelRead, ReadSees: actors.LevelRead, WriteSees: actors.LevelNone}})
		for what, fragment := range map[string]string{"keys": string(keys), "grants": string(grants)} {
			root := parsedRows(t, fragment)
			texts, elements := 0, map[string]int{}
			walk(root, func(n *html.Node) {
				switch n.Type {
				case html.ElementNode:
					elements[n.Data]++
					for _, a := range n.Attr {
						if strings.HasPrefix(a.Key, "on") || a.Key == "src" {
							t.Errorf("%s %q: attribute %s=%q", what, hostile, a.Key, a.Val)
						}
						if a.Key == "href" && !strings.HasPrefix(a.Val, "/access/keys/") && !strings.HasPrefix(a.Val, "/activity?key=") {
							t.Errorf("%s %q: href %q", what, hostile, a.Val)
						}
						if q, found := strings.CutPrefix(a.Val, "/activity?"); a.Key == "href" && found {
							if v, err := url.ParseQuery(q); err != nil || len(v) != 1 || v.Get("key") != hostile {
								t.Errorf("%s %q: the activity link's query %q", what, hostile, q)
							}
						}
					}
				case html.TextNode:
					if strings.Contains(n.Data, hostile) {
						texts++
					}
				}
			})
			for _, tag := range []string{"script", "img", "svg", "b", "table"} {
				if elements[tag] > 0 {
					t.Errorf("%s %q: the rows gained a <%s>", what, hostile, tag)
				}
			}
			if texts == 0 {
				t.Errorf("%s %q: the value is not in the text", what, hostile)
			}
		}
		// The ID survives as the select's id and the hidden token's value.
		root := parsedRows(t, string(grants))
		var id, token string
		walk(root, func(n *html.Node) {
			for _, a := range n.Attr {
				switch {
				case n.Data == "select" && a.Key == "id":
					id = a.Val
				case n.Data == "input" && a.Key == "value":
					token = a.Val
				}
			}
		})
		if id != "grant-"+hostile || token != hostile {
			t.Errorf("%q: select id %q, token %q", hostile, id, token)
		}
	}
}
