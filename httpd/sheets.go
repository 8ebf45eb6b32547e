package httpd

import (
	"fmt"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Sheet routes, shared by the agent API and the owner API.

// The largest body of a Sheet write the spec allows, in the widest JSON
// that spells it: a PATCH of 100 rows of five 512-code-point cells, and
// all five headings, with every code point one outside the Basic
// Multilingual Plane written as a \u surrogate pair ("\ud83d\ude00", 12
// bytes), plus the member names, punctuation and room for whitespace. A
// client may escape whatever it likes; a spec-valid body must never be
// refused for its size (3.1 MB; 2 MiB refused such a body before).
const (
	jsonCodePointBytesMax = len(`\ud83d\ude00`)
	sheetCellBytesMax     = actors.SheetCellCharsMax*jsonCodePointBytesMax + len(`"",`)
	sheetRowBytesMax      = len(`{"index":999,"cells":[]},`) + actors.SheetColumnCount*sheetCellBytesMax
	sheetHeadersBytesMax  = len(`"headers":[],`) + actors.SheetColumnCount*(actors.SheetHeaderCharsMax*jsonCodePointBytesMax+len(`"",`))
	sheetBodyBytesMax     = len(`{"expected_revision":-9223372036854775808,"rows":[]}`) + sheetHeadersBytesMax +
		actors.SheetPatchRowsMax*sheetRowBytesMax + sheetBodyWhitespaceMax
	// sheetBodyWhitespaceMax is the whitespace a body may hold around its
	// tokens (a pretty-printed body has a few bytes per token).
	sheetBodyWhitespaceMax = 64 << 10
)

// Sheet read parameters.
const (
	sheetOffsetMax        = 999
	sheetLimitMin         = 1
	sheetLimitMax         = 100
	sheetLimitDefault     = 100
	sheetQueryParamsCount = 5
)

// sheetQuery parses and bounds the GET parameters. An unsupported filter
// query is a 400; any other unknown, repeated or malformed parameter a 422.
func sheetQuery(ctx *fasthttp.RequestCtx) (actors.SheetQuery, error) {
	q := actors.SheetQuery{SpaceID: pathParam(ctx, "space_id"), Limit: sheetLimitDefault}
	args := ctx.QueryArgs()
	if args.Has("filter") {
		return q, actors.Errorf(codeBadRequest, "the filter query is not supported; filter with address and chain")
	}
	seen := make(map[string]bool, sheetQueryParamsCount)
	for k, v := range args.All() {
		var err error
		key, value := string(k), string(v)
		if seen[key] {
			return q, actors.Errorf(actors.CodeValidation, "query parameter %q appears more than once", truncate(key))
		}
		seen[key] = true
		switch key {
		case "offset":
			q.Offset, err = queryInt(key, value, 0, sheetOffsetMax)
		case "limit":
			q.Limit, err = queryInt(key, value, sheetLimitMin, sheetLimitMax)
		case "view":
			switch value {
			case "":
			case "sparse":
				q.Sparse = true
			default:
				err = actors.Errorf(actors.CodeValidation, `view must be empty or "sparse"`)
			}
		case "address":
			q.Address = &value
		case "chain":
			q.Chain = &value
		default:
			err = actors.Errorf(actors.CodeValidation, "unknown query parameter %q; the Sheet takes offset, limit, view, address and chain", truncate(key))
		}
		if err != nil {
			return q, err
		}
	}
	return q, nil
}

// queryInt parses a decimal integer query parameter within [lo, hi].
func queryInt(name, value string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(value)
	if err != nil || value == "" || value[0] == '+' || value[0] == '-' && n >= 0 {
		return 0, actors.Errorf(actors.CodeValidation, "%s must be an integer from %d to %d", name, lo, hi)
	}
	if n < lo || n > hi {
		return 0, actors.Errorf(actors.CodeValidation, "%s must be an integer from %d to %d", name, lo, hi)
	}
	return n, nil
}

func truncate(s string) string {
	if len(s) > fieldNameBytesMax {
		return s[:fieldNameBytesMax] + "…"
	}
	return s
}

// Cells and headers decode as []*string so that a JSON null, which is not
// a string, is told apart from "".
type sheetRowRequest struct {
	Index *int      `json:"index"`
	Cells []*string `json:"cells"`
}

type sheetPatchRequest struct {
	ExpectedRevision *int64             `json:"expected_revision"`
	Headers          []*string          `json:"headers"`
	Rows             *[]sheetRowRequest `json:"rows"`
}

type sheetPutRequest struct {
	ExpectedRevision *int64    `json:"expected_revision"`
	Cells            []*string `json:"cells"`
}

// stringArray returns the values of a string array in which null is refused.
func stringArray(field string, values []*string) ([]string, error) {
	if values == nil {
		return nil, nil
	}
	out := make([]string, len(values))
	for i, v := range values {
		if v == nil {
			return nil, actors.Errorf(actors.CodeValidation, "%s[%d] must be a string, not null", field, i)
		}
		out[i] = *v
	}
	return out, nil
}

type sheetDeleteRequest struct {
	ExpectedRevision *int64 `json:"expected_revision"`
	Index            *int   `json:"index"`
}

type sheetCompactRequest struct {
	ExpectedRevision *int64 `json:"expected_revision"`
}

// sheetPath is the path of a Sheet Space's Sheet.
const sheetPath = "/bookmark-spaces/{space_id}/sheet"

var sheetOperations = []operation{
	{id: "getSheet", method: fasthttp.MethodGet, path: sheetPath, apis: bothAPIs, sheet: true,
		response: answerOf(actors.SheetQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.readWith(r, func() (actors.Query, error) { return sheetQuery(r.ctx) })
		}},
	{id: "patchSheet", method: fasthttp.MethodPatch, path: sheetPath, apis: bothAPIs, sheet: true,
		request: typeOf[sheetPatchRequest](), response: typeOf[actors.SheetPatchedView](), status: fasthttp.StatusOK,
		serve: sheetWrite(func(ctx *fasthttp.RequestCtx, w actors.SheetWrite) (actors.Payload, error) {
			var req sheetPatchRequest
			if err := decodeBody(ctx, &req, sheetBodyBytesMax); err != nil {
				return nil, err
			}
			if req.ExpectedRevision == nil {
				return nil, required("expected_revision")
			}
			w.ExpectedRevision = *req.ExpectedRevision
			headers, err := stringArray("headers", req.Headers)
			if err != nil {
				return nil, err
			}
			p := &actors.PatchSheet{SheetWrite: w, Headers: headers}
			if req.Rows != nil {
				if len(*req.Rows) == 0 {
					return nil, actors.Errorf(actors.CodeValidation, "rows must hold 1 to 100 entries")
				}
				for i, row := range *req.Rows {
					if row.Index == nil {
						return nil, actors.Errorf(actors.CodeValidation, "rows[%d].index is required", i)
					}
					if row.Cells == nil {
						return nil, actors.Errorf(actors.CodeValidation, "rows[%d].cells is required", i)
					}
					cells, err := stringArray(fmt.Sprintf("rows[%d].cells", i), row.Cells)
					if err != nil {
						return nil, err
					}
					p.Rows = append(p.Rows, actors.SheetRowInput{Index: *row.Index, Cells: cells})
				}
			}
			if req.Headers == nil && req.Rows == nil {
				return nil, actors.Errorf(actors.CodeValidation, "send headers, rows or both")
			}
			return p, nil
		})},
	{id: "putSheetRow", method: fasthttp.MethodPut, path: sheetPath, apis: bothAPIs, sheet: true,
		request: typeOf[sheetPutRequest](), response: typeOf[actors.SheetPutView](), status: fasthttp.StatusOK,
		serve: sheetWrite(func(ctx *fasthttp.RequestCtx, w actors.SheetWrite) (actors.Payload, error) {
			var req sheetPutRequest
			if err := decodeBody(ctx, &req, sheetBodyBytesMax); err != nil {
				return nil, err
			}
			switch {
			case req.ExpectedRevision == nil:
				return nil, required("expected_revision")
			case req.Cells == nil:
				return nil, required("cells")
			}
			w.ExpectedRevision = *req.ExpectedRevision
			cells, err := stringArray("cells", req.Cells)
			if err != nil {
				return nil, err
			}
			return &actors.PutSheetRow{SheetWrite: w, Cells: cells}, nil
		})},
	{id: "deleteSheetRow", method: fasthttp.MethodDelete, path: sheetPath, apis: bothAPIs, sheet: true,
		request: typeOf[sheetDeleteRequest](), response: typeOf[actors.SheetDeletedView](), status: fasthttp.StatusOK,
		serve: sheetWrite(func(ctx *fasthttp.RequestCtx, w actors.SheetWrite) (actors.Payload, error) {
			var req sheetDeleteRequest
			if err := decodeBody(ctx, &req, sheetBodyBytesMax); err != nil {
				return nil, err
			}
			switch {
			case req.ExpectedRevision == nil:
				return nil, required("expected_revision")
			case req.Index == nil:
				return nil, required("index")
			}
			w.ExpectedRevision = *req.ExpectedRevision
			return &actors.DeleteSheetRow{SheetWrite: w, Index: *req.Index}, nil
		})},
	{id: "compactSheet", method: fasthttp.MethodPost, path: sheetPath, apis: bothAPIs, sheet: true,
		request: typeOf[sheetCompactRequest](), response: typeOf[actors.SheetCompactedView](), status: fasthttp.StatusOK,
		serve: sheetWrite(func(ctx *fasthttp.RequestCtx, w actors.SheetWrite) (actors.Payload, error) {
			var req sheetCompactRequest
			if err := decodeBody(ctx, &req, sheetBodyBytesMax); err != nil {
				return nil, err
			}
			if req.ExpectedRevision == nil {
				return nil, required("expected_revision")
			}
			w.ExpectedRevision = *req.ExpectedRevision
			return &actors.CompactSheet{SheetWrite: w}, nil
		})},
}

// sheetWrite is the write path of a Sheet route: the payload carries the
// Space and the rules the write is applied under (sheetWriteRules). The
// route puts the Sheet ceiling in front (operation.sheet).
func sheetWrite(build func(*fasthttp.RequestCtx, actors.SheetWrite) (actors.Payload, error)) func(*Server, *request) error {
	return func(s *Server, r *request) error {
		return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			w := s.sheetWriteRules(r.aud)
			w.SpaceID = pathParam(ctx, "space_id")
			return build(ctx, w)
		}})
	}
}

// sheetWriteRules are the rules a Sheet write of aud is applied under. The
// Sheet-write budget is the agents' (when this server enforces it): the
// owner API's writes neither spend nor meet it. Cells must be plain text.
func (s *Server) sheetWriteRules(aud audience) actors.SheetWrite {
	return actors.SheetWrite{EnforceBudget: s.sheetBudget && aud == audienceAgent, PlainTextCells: true}
}
