package httpd

import (
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/valyala/fasthttp"
)

// openAPIDocs are the two embedded descriptions and the prefix each covers.
var openAPIDocs = []struct {
	name, prefix, scheme string
	doc                  *[]byte
	public               []string // operations without authentication
}{
	{"agent.json", agentPrefix, "AgentBearer", &agentOpenAPI, []string{"GET /docs", "GET /docs/sheets", "GET /openapi.json"}},
	{"owner.json", ownerPrefix, "OwnerBearer", &ownerOpenAPI, []string{"POST /sessions", "GET /openapi.json"}},
}

// openAPIIdempotent are the operations the spec lists as accepting
// Idempotency-Key (Endpoints, Common notes); the owner API shares the routes.
var openAPIIdempotent = []string{
	"POST /portfolio/cards",
	"POST /bookmark-spaces",
	"DELETE /bookmark-spaces/{space_id}",
	"POST /bookmark-spaces/{space_id}/cards",
	"POST /cards/move",
	"DELETE /portfolio/cards/{card_id}",
	"DELETE /bookmark-spaces/{space_id}/cards/{card_id}",
	"DELETE /history/notes/{txid}",
}

func loadOpenAPI(t *testing.T, data []byte) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validate: %v", err)
	}
	return doc
}

// openAPIOperations returns "METHOD /path" for every operation of doc.
func openAPIOperations(doc *openapi3.T) map[string]*openapi3.Operation {
	ops := map[string]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops[method+" "+path] = op
		}
	}
	return ops
}

func TestOpenAPIDocumentsAreValid31(t *testing.T) {
	t.Parallel()
	for _, d := range openAPIDocs {
		t.Run(d.name, func(t *testing.T) {
			doc := loadOpenAPI(t, *d.doc)
			if doc.OpenAPI != "3.1.0" || !doc.IsOpenAPI31OrLater() {
				t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
			}
			if doc.Info.Version != "1.0" {
				t.Errorf("info.version %q, want 1.0", doc.Info.Version)
			}
			if len(doc.Servers) != 1 || doc.Servers[0].URL != d.prefix {
				t.Errorf("servers %v, want one with url %s", doc.Servers, d.prefix)
			}
			scheme := doc.Components.SecuritySchemes[d.scheme]
			if scheme == nil || scheme.Value.Type != "http" || scheme.Value.Scheme != "bearer" || len(doc.Components.SecuritySchemes) != 1 {
				t.Fatalf("securitySchemes must be exactly %s {type: http, scheme: bearer}", d.scheme)
			}
			if len(doc.Security) != 1 || len(doc.Security[0]) != 1 || doc.Security[0][d.scheme] == nil {
				t.Errorf("global security must be [{%s: []}], got %v", d.scheme, doc.Security)
			}
			// The error shape: {code, error}, code one of every code of
			// the status table (which covers actors/errors.go).
			errSchema := doc.Components.Schemas["Error"].Value
			if !slices.Equal(sorted(errSchema.Required), []string{"code", "error"}) {
				t.Errorf("Error.required %v, want [code error]", errSchema.Required)
			}
			var enum []string
			for _, v := range doc.Components.Schemas["ErrorCode"].Value.Enum {
				enum = append(enum, v.(string))
			}
			var codes []string
			for c := range statusOf {
				codes = append(codes, string(c))
			}
			if !slices.Equal(sorted(enum), sorted(codes)) {
				t.Errorf("ErrorCode enum %v, want the codes %v", sorted(enum), sorted(codes))
			}
			for key, op := range openAPIOperations(doc) {
				public := slices.Contains(d.public, key)
				if public != (op.Security != nil && len(*op.Security) == 0) {
					t.Errorf("%s: public %v, but its security is %v", key, public, op.Security)
				}
				if !public && op.Responses.Status(401) == nil {
					t.Errorf("%s: an authenticated operation without a 401", key)
				}
				idem := slices.ContainsFunc(op.Parameters, func(p *openapi3.ParameterRef) bool {
					return p.Value.In == "header" && p.Value.Name == "Idempotency-Key"
				})
				if idem != slices.Contains(openAPIIdempotent, key) {
					t.Errorf("%s: Idempotency-Key documented %v, the spec says %v", key, idem, !idem)
				}
				for status, resp := range op.Responses.Map() {
					if status[0] != '4' && status[0] != '5' {
						continue
					}
					if resp.Value.Content.Get("application/json") == nil {
						t.Errorf("%s %s: an error response without the error shape", key, status)
					}
					if status == "429" && resp.Value.Headers["Retry-After"] == nil {
						t.Errorf("%s 429: no Retry-After header", key)
					}
				}
			}
		})
	}
}

// openAPIServedRoutes returns "METHOD /path" for every route the public
// handler serves, with the path as the router holds it. The router's
// route list names the paths; OPTIONS on each names its methods, as a
// client sees them (a path's 405 stubs are not methods).
func openAPIServedRoutes(t *testing.T) []string {
	t.Helper()
	s := New(Config{})
	r := s.newRouter()
	s.registerAgent(r)
	s.registerOwner(r)
	var paths []string
	for _, list := range r.List() {
		for _, p := range list {
			if !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	h := s.PublicHandler()
	var routes []string
	for _, p := range paths {
		for _, m := range openAPIAllow(t, h, p) {
			routes = append(routes, m+" "+p)
		}
	}
	slices.Sort(routes)
	return routes
}

var openAPIPathParam = regexp.MustCompile(`\{[a-z_]+\}`)

// openAPIAllow returns the methods OPTIONS reports for a route path (with
// its parameters filled in), OPTIONS itself left out; none for a path
// that is not served.
func openAPIAllow(t *testing.T, h fasthttp.RequestHandler, path string) []string {
	t.Helper()
	ctx := &fasthttp.RequestCtx{}
	ctx.Request.Header.SetMethod(fasthttp.MethodOptions)
	ctx.Request.SetRequestURI(openAPIPathParam.ReplaceAllString(path, "x"))
	h(ctx)
	if ctx.Response.StatusCode() != fasthttp.StatusNoContent {
		return nil
	}
	var methods []string
	for _, m := range strings.Split(string(ctx.Response.Header.Peek(fasthttp.HeaderAllow)), ",") {
		if m = strings.TrimSpace(m); m != "" && m != fasthttp.MethodOptions {
			methods = append(methods, m)
		}
	}
	return methods
}

// TestOpenAPIDocumentsEveryRoute checks both ways that the documents and
// the router agree: every served route of /v1 and /owner/v1 is an operation
// of its document, and every operation is served.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	served := openAPIServedRoutes(t)
	var documented []string
	for _, d := range openAPIDocs {
		doc := loadOpenAPI(t, *d.doc)
		for key := range openAPIOperations(doc) {
			method, path, _ := strings.Cut(key, " ")
			documented = append(documented, method+" "+d.prefix+path)
		}
	}
	slices.Sort(documented)
	for _, r := range served {
		switch {
		case slices.Contains(documented, r):
		default:
			t.Errorf("%s is served but not documented", r)
		}
	}
	h := New(Config{}).PublicHandler()
	for _, r := range documented {
		if slices.Contains(served, r) {
			continue
		}
		_, path, _ := strings.Cut(r, " ")
		t.Errorf("%s is documented but not served (OPTIONS on the path allows %v)", r, openAPIAllow(t, h, path))
	}
	if len(served) == 0 || len(documented) == 0 {
		t.Fatalf("nothing to compare: %d served, %d documented", len(served), len(documented))
	}
}

// TestOpenAPIServedWithoutKey checks that both documents are served as
// JSON, without a key, byte for byte as embedded, with or without limits.
func TestOpenAPIServedWithoutKey(t *testing.T) {
	t.Parallel()
	for _, limits := range []bool{false, true} {
		h := New(Config{EdgeLimits: limits}).PublicHandler()
		for _, d := range openAPIDocs {
			for range 40 { // more than any per-client budget
				ctx := &fasthttp.RequestCtx{}
				ctx.Request.Header.SetMethod(fasthttp.MethodGet)
				ctx.Request.SetRequestURI(d.prefix + "/openapi.json")
				h(ctx)
				if got := ctx.Response.StatusCode(); got != fasthttp.StatusOK {
					t.Fatalf("limits %v: GET %s/openapi.json: status %d, body %.200s", limits, d.prefix, got, ctx.Response.Body())
				}
				if ct := string(ctx.Response.Header.ContentType()); ct != "application/json" {
					t.Fatalf("GET %s/openapi.json: Content-Type %q", d.prefix, ct)
				}
				if string(ctx.Response.Body()) != string(*d.doc) {
					t.Fatalf("GET %s/openapi.json: body is not the embedded document", d.prefix)
				}
			}
		}
	}
}

// TestOpenAPISharedSchemasAgree checks that the owner document describes
// the shared resource paths with the agent document's schemas, except for
// what the owner alone has: the grant on cards and Spaces, and type on a
// Space PATCH.
func TestOpenAPISharedSchemasAgree(t *testing.T) {
	t.Parallel()
	agent, owner := loadOpenAPI(t, agentOpenAPI), loadOpenAPI(t, ownerOpenAPI)
	ownerOnly := map[string][]string{"Card": {"grant"}, "Space": {"grant"}, "SpacePatchRequest": {"type"}}
	for name, a := range agent.Components.Schemas {
		o := owner.Components.Schemas[name]
		if o == nil {
			if !slices.Contains([]string{"Me", "Usage"}, name) {
				t.Errorf("schema %s is in agent.json only", name)
			}
			continue
		}
		ap, op := slices.Sorted(maps.Keys(a.Value.Properties)), slices.Sorted(maps.Keys(o.Value.Properties))
		op = slices.DeleteFunc(op, func(p string) bool { return slices.Contains(ownerOnly[name], p) })
		if !slices.Equal(ap, op) {
			t.Errorf("schema %s: agent properties %v, owner %v", name, ap, op)
		}
		if _, extra := ownerOnly[name]; extra {
			continue
		}
		aj, _ := json.Marshal(a.Value)
		oj, _ := json.Marshal(o.Value)
		if string(aj) != string(oj) {
			t.Errorf("schema %s differs between the documents", name)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
