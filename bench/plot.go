package main

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// The plot is hand-written SVG: one panel per scenario with throughput
// (left axis, blue) and p99 latency (right axis, red) for each second of
// the run. SVG needs no library and opens in any browser, and a stall, a
// warm-up or a slow leak is visible in it where an average hides it.

const (
	plotWidth       = 960
	plotPanelHeight = 280
	plotTop         = 36 // the document title
	plotLeft        = 80 // room for the throughput labels
	plotRight       = 80 // room for the p99 labels
	plotPanelTop    = 44 // panel title and legend
	plotPanelBottom = 44 // x labels
	colorThroughput = "#1f6fb4"
	colorP99        = "#d62728"
)

func writePlotFile(path string, results []*result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := writeSVG(w, results); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeSVG writes the whole document.
func writeSVG(w io.Writer, results []*result) error {
	height := plotTop + max(len(results), 1)*plotPanelHeight
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		plotWidth, height, plotWidth, height)
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="white"/>`+"\n", plotWidth, height)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", plotLeft,
		esc("addrwatch bench: throughput and p99 latency per second"))
	if len(results) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d">no results</text>`+"\n", plotLeft, plotTop+40)
	}
	for i, r := range results {
		writePanel(&b, r, plotTop+i*plotPanelHeight)
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// writePanel draws one scenario with its top edge at y0.
func writePanel(b *bytes.Buffer, r *result, y0 int) {
	left, right := float64(plotLeft), float64(plotWidth-plotRight)
	top, bottom := float64(y0+plotPanelTop), float64(y0+plotPanelHeight-plotPanelBottom)

	title := fmt.Sprintf("%s — %s, %d connections, %s req/s, p99 %s", r.Scenario, r.Mode, r.Connections,
		commas(int64(r.Total.Throughput+0.5)), fmtLatency(r.Total.Latency.P99))
	fmt.Fprintf(b, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", plotLeft, y0+18, esc(title))
	// Legend, top right.
	lx := int(right) - 200
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", lx, y0+32, lx+18, y0+32, colorThroughput)
	fmt.Fprintf(b, `<text x="%d" y="%d">throughput (req/s)</text>`+"\n", lx+22, y0+36)
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", lx+140, y0+32, lx+158, y0+32, colorP99)
	fmt.Fprintf(b, `<text x="%d" y="%d">p99</text>`+"\n", lx+162, y0+36)

	maxT, maxRPS, maxP99 := 1.0, 0.0, 0.0
	for _, s := range r.Series {
		maxT = math.Max(maxT, s.At.Seconds())
		maxRPS = math.Max(maxRPS, s.Throughput)
		maxP99 = math.Max(maxP99, float64(s.P99)/float64(time.Millisecond))
	}
	topRPS, topP99 := niceCeil(maxRPS), niceCeil(maxP99)
	x := func(t float64) float64 { return left + (right-left)*t/maxT }
	yRPS := func(v float64) float64 { return bottom - (bottom-top)*v/topRPS }
	yP99 := func(v float64) float64 { return bottom - (bottom-top)*v/topP99 }

	// Horizontal grid with both scales.
	const gridLines = 4
	for i := 0; i <= gridLines; i++ {
		y := bottom - (bottom-top)*float64(i)/gridLines
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e0e0e0"/>`+"\n", num(left), num(y), num(right), num(y))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end" fill="%s">%s</text>`+"\n", num(left-6), num(y+4), colorThroughput, esc(compact(topRPS*float64(i)/gridLines)))
		fmt.Fprintf(b, `<text x="%s" y="%s" fill="%s">%s</text>`+"\n", num(right+6), num(y+4), colorP99, esc(compact(topP99*float64(i)/gridLines)+" ms"))
	}
	// Time axis.
	step := niceStep(maxT)
	for t := 0.0; t <= maxT+1e-9; t += step {
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#999"/>`+"\n", num(x(t)), num(bottom), num(x(t)), num(bottom+4))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(x(t)), num(bottom+17), esc(compact(t)+"s"))
	}
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#999"/>`+"\n", num(left), num(top), num(right-left), num(bottom-top))
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle" fill="#555">seconds since the start</text>`+"\n", num((left+right)/2), num(bottom+34))

	if len(r.Series) == 0 {
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle" fill="#555">no samples</text>`+"\n", num((left+right)/2), num((top+bottom)/2))
		return
	}
	polyline(b, colorThroughput, r.Series, func(s sample) (float64, float64) { return x(s.At.Seconds()), yRPS(s.Throughput) })
	polyline(b, colorP99, r.Series, func(s sample) (float64, float64) {
		return x(s.At.Seconds()), yP99(float64(s.P99) / float64(time.Millisecond))
	})
}

func polyline(b *bytes.Buffer, color string, series []sample, at func(sample) (float64, float64)) {
	pts := make([]string, len(series))
	for i, s := range series {
		px, py := at(s)
		pts[i] = num(px) + "," + num(py)
	}
	fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round" points="%s"/>`+"\n", color, strings.Join(pts, " "))
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten, so the
// axis labels are round numbers.
func niceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if v <= m*p*(1+1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// niceStep is a round tick spacing giving at most ten ticks over span.
func niceStep(span float64) float64 {
	return math.Max(niceCeil(span/10), 1)
}

// compact prints an axis value: 12000 → 12k, 1500 → 1.5k, 0.25 → 0.25.
func compact(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

// num prints a coordinate with one decimal.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// esc escapes text for an SVG text node or attribute.
func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
