package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
)

// checkSVG parses doc with encoding/xml to its end and returns how many
// elements of each name it holds.
func checkSVG(t *testing.T, doc []byte) map[string]int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	counts := map[string]int{}
	depth, root := 0, ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, doc)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				root = el.Name.Local
				if el.Name.Space != "http://www.w3.org/2000/svg" {
					t.Fatalf("root namespace %q", el.Name.Space)
				}
			}
			depth++
			counts[el.Name.Local]++
		case xml.EndElement:
			depth--
		}
	}
	if root != "svg" || depth != 0 {
		t.Fatalf("root %q, depth at end %d", root, depth)
	}
	return counts
}

func TestSVGWellFormed(t *testing.T) {
	t.Parallel()
	results := sampleResults()
	results[1].Scenario = `reads <&> "quoted"` // text that must be escaped
	var b bytes.Buffer
	if err := writeSVG(&b, results); err != nil {
		t.Fatal(err)
	}
	counts := checkSVG(t, b.Bytes())
	// sheet-put has a series (two lines); reads has none ("no samples").
	if counts["polyline"] != 2 {
		t.Fatalf("%d polylines, want 2", counts["polyline"])
	}
	if !strings.Contains(b.String(), "no samples") || !strings.Contains(b.String(), "&lt;&amp;&gt;") {
		t.Fatal("missing the empty-panel note or the escaped title")
	}
}

func TestSVGNoResults(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := writeSVG(&b, nil); err != nil {
		t.Fatal(err)
	}
	checkSVG(t, b.Bytes())
}

func TestNiceScales(t *testing.T) {
	t.Parallel()
	for v, want := range map[float64]float64{0: 1, 0.3: 0.5, 1: 1, 3: 5, 7.5: 10, 2400: 2500, 3003: 5000, 12000: 20000} {
		if got := niceCeil(v); got != want {
			t.Errorf("niceCeil(%v) = %v, want %v", v, got, want)
		}
	}
	for span, want := range map[float64]float64{3: 1, 10: 1, 30: 5, 60: 10, 600: 100} {
		if got := niceStep(span); got != want {
			t.Errorf("niceStep(%v) = %v, want %v", span, got, want)
		}
	}
}
