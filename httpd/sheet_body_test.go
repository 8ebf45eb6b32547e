package httpd

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// worstSheetPatch is the widest spelling of the largest Sheet PATCH the
// spec allows: 100 rows of five 512-code-point cells and the five headings,
// every code point an astral one escaped as a surrogate pair.
func worstSheetPatch(revision int64) []byte {
	const emoji = `\ud83d\ude00` // U+1F600
	cell := `"` + strings.Repeat(emoji, actors.SheetCellCharsMax) + `"`
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"expected_revision": %d, "headers": [`, revision)
	for i, h := range []string{"Address", "Blockchain", "Transaction ID", "Date"} {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`"`)
		for _, r := range h {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		b.WriteString(`"`)
	}
	b.WriteString(`, "` + strings.Repeat(emoji, actors.SheetHeaderCharsMax) + `"], "rows": [`)
	for i := range actors.SheetPatchRowsMax {
		if i > 0 {
			b.WriteString(",\n  ")
		}
		fmt.Fprintf(&b, `{"index": %d, "cells": [%s, %s, %s, %s, %s]}`, 900+i%100, cell, cell, cell, cell, cell)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// A spec-valid PATCH is never refused for its size, however the client
// escapes it (real clients' JSON encoders escape freely): the largest,
// every character escaped, is about 3.1 MB and is applied.
func TestSheetPatchOfEscapedMaximaIsAccepted(t *testing.T) {
	t.Parallel()
	e := newSheetSite(t)
	body := worstSheetPatch(e.revision())
	if len(body) <= 2<<20 || len(body) > sheetBodyBytesMax || sheetBodyBytesMax > bodyBytesMax {
		t.Fatalf("the body is %d bytes; the Sheet limit %d, the server's %d", len(body), sheetBodyBytesMax, bodyBytesMax)
	}
	var req fasthttp.Request
	req.Header.SetMethod("PATCH")
	req.SetRequestURI("/owner/v1/bookmark-spaces/" + e.id + "/sheet")
	req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+e.o.account.OwnerSecret)
	req.Header.SetContentType("application/json")
	req.SetBody(body)
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 1}, nil)
	e.o.handler(ctx)
	if ctx.Response.StatusCode() != 200 {
		t.Fatalf("a %d-byte spec-valid PATCH: %d %.300s", len(body), ctx.Response.StatusCode(), ctx.Response.Body())
	}
	if got := e.slot(950)[4].(string); got != strings.Repeat("\U0001F600", actors.SheetCellCharsMax) {
		t.Fatalf("index 950 holds %d bytes", len(got))
	}
	// One byte over the bound is refused as too large, before decoding.
	over := append(bytes.Repeat([]byte(" "), sheetBodyBytesMax-len(body)+1), body...)
	req.SetBody(over)
	ctx = &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 1}, nil)
	e.o.handler(ctx)
	if ctx.Response.StatusCode() != fasthttp.StatusUnprocessableEntity || !strings.Contains(string(ctx.Response.Body()), "exceeds") {
		t.Fatalf("a body over the bound: %d %.300s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
}
