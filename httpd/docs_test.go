package httpd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// agentRoutePaths are the /v1 paths the route files register (agent.go,
// docs.go, portfolio.go, spaces.go, bookmarks.go, sheets.go, moves.go,
// history_routes.go, events.go).
var agentRoutePaths = []string{
	"/v1/me",
	"/v1/docs",
	"/v1/docs/sheets",
	"/v1/portfolio/cards",
	"/v1/portfolio/cards/validate",
	"/v1/portfolio/cards/{card_id}",
	"/v1/bookmark-spaces",
	"/v1/bookmark-spaces/{space_id}",
	"/v1/bookmark-spaces/{space_id}/cards",
	"/v1/bookmark-spaces/{space_id}/cards/validate",
	"/v1/bookmark-spaces/{space_id}/cards/{card_id}",
	"/v1/bookmark-spaces/{space_id}/sheet",
	"/v1/cards/move",
	"/v1/cards/move/validate",
	"/v1/history",
	"/v1/history/cards",
	"/v1/history/cards/{card_id}/transactions",
	"/v1/history/notes/batch",
	"/v1/history/notes/{txid}",
	"/v1/events",
}

// registeredAgentPaths returns every path the agent API registers, as the
// router holds them.
func registeredAgentPaths(t *testing.T) []string {
	t.Helper()
	s := New(Config{})
	r := s.newRouter()
	s.registerAgent(r)
	var paths []string
	for _, list := range r.List() {
		for _, p := range list {
			if strings.HasPrefix(p, agentPrefix+"/") && !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	slices.Sort(paths)
	return paths
}

func TestDocsMentionEveryAgentRoute(t *testing.T) {
	t.Parallel()
	doc := string(agentGuide)
	registered := registeredAgentPaths(t)
	for _, p := range agentRoutePaths {
		if !slices.Contains(registered, p) {
			t.Errorf("%s is listed in this test but not registered", p)
		}
	}
	for _, p := range registered {
		if !strings.Contains(doc, "`"+p+"`") {
			t.Errorf("docs/agent.md does not mention the route %s", p)
		}
	}
	// The Sheet routes are described in full by their own guide, which
	// this document must point to.
	if !strings.Contains(doc, "(/v1/docs/sheets)") {
		t.Error("docs/agent.md does not link to the Sheet guide")
	}
}

// errorCodes returns the values of the Code constants: the spec's, in
// actors/errors.go, and the edge's own, in httpd/errors.go and httpd/edge/codes.go.
func errorCodes(t *testing.T) []actors.Code {
	t.Helper()
	var codes []actors.Code
	for _, file := range []string{"../actors/errors.go", "errors.go", "edge/codes.go"} {
		codes = append(codes, codeConstants(t, file)...)
	}
	if len(codes) < len(statusOf) {
		t.Fatalf("found %d codes in actors/errors.go, httpd/errors.go and httpd/edge/codes.go, fewer than the %d in the status table", len(codes), len(statusOf))
	}
	return codes
}

// codeConstants returns the values of the constants of type Code (or
// actors.Code) in a Go file.
func codeConstants(t *testing.T, file string) []actors.Code {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codes []actors.Code
	for _, decl := range f.Decls {
		gen, isGen := decl.(*ast.GenDecl)
		if !isGen || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			switch typ := vs.Type.(type) {
			case *ast.Ident:
				if typ.Name != "Code" {
					continue
				}
			case *ast.SelectorExpr:
				if typ.Sel.Name != "Code" {
					continue
				}
			default:
				continue
			}
			for _, v := range vs.Values {
				lit, isLit := v.(*ast.BasicLit)
				if !isLit || lit.Kind != token.STRING {
					t.Fatalf("a Code constant is not a string literal")
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				codes = append(codes, actors.Code(s))
			}
		}
	}
	return codes
}

func TestDocsMentionEveryErrorCode(t *testing.T) {
	t.Parallel()
	doc := string(agentGuide)
	for _, code := range errorCodes(t) {
		if !strings.Contains(doc, "`"+string(code)+"`") {
			t.Errorf("docs/agent.md does not mention the error code %s", code)
		}
		// The errors table gives each code's status.
		row := "| `" + string(code) + "` | " + strconv.Itoa(StatusOf(code)) + " |"
		if !strings.Contains(doc, row) {
			t.Errorf("docs/agent.md has no errors-table row %q", row)
		}
	}
}

func getPublic(h fasthttp.RequestHandler, path string) *fasthttp.RequestCtx {
	ctx := &fasthttp.RequestCtx{}
	ctx.Request.Header.SetMethod(fasthttp.MethodGet)
	ctx.Request.SetRequestURI(path)
	h(ctx)
	return ctx
}

func TestDocsServedWithoutKey(t *testing.T) {
	t.Parallel()
	for _, limits := range []bool{false, true} {
		h := New(Config{EdgeLimits: limits}).PublicHandler()
		for _, tc := range []struct {
			path string
			want []byte
		}{
			{agentPrefix + "/docs", agentGuide},
			{agentPrefix + "/docs/sheets", sheetsGuide},
		} {
			// More requests than any per-client budget: the documents are
			// never limited.
			for range 40 {
				ctx := getPublic(h, tc.path)
				if got := ctx.Response.StatusCode(); got != fasthttp.StatusOK {
					t.Fatalf("limits %v: GET %s without a key: status %d, body %s", limits, tc.path, got, ctx.Response.Body())
				}
				if ct := string(ctx.Response.Header.ContentType()); !strings.HasPrefix(ct, "text/markdown") {
					t.Fatalf("GET %s: Content-Type %q, want text/markdown", tc.path, ct)
				}
				if string(ctx.Response.Body()) != string(tc.want) {
					t.Fatalf("GET %s: body is not the embedded document", tc.path)
				}
			}
		}
	}
	if len(agentGuide) == 0 {
		t.Fatal("docs/agent.md is empty")
	}
}
