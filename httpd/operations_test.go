package httpd

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/addrwatch/addrwatch/mcpserver"
)

// operationSchemaExceptions are the known differences between a declared
// Go type and a document's schema, by document, operationId and "request"
// or "response", each with why it stands.
var operationSchemaExceptions = map[string]string{
	// One body type serves both APIs; type is the owner's alone (the spec:
	// "Agent type changes are not supported in v1"), and the rule refuses
	// it from an agent (actors/spaces.go). The agent document rightly
	// leaves it out, as TestOpenAPISharedSchemasAgree also knows.
	"agent.json updateSpace request": "type is honoured for the owner only",
}

// TestOperationsMatchTheDocuments checks every declared operation against
// the document of each API that serves it, and every operation of the
// documents against the declarations: the method and path with the same
// operationId, Idempotency-Key documented exactly when it is honoured, the
// success status, and the property names of the request and success
// bodies against the JSON fields of the declared Go types.
func TestOperationsMatchTheDocuments(t *testing.T) {
	t.Parallel()
	if len(operations) == 0 {
		t.Fatal("no operation is declared")
	}
	for _, d := range openAPIDocs {
		aud := audienceAgent
		if d.prefix == ownerPrefix {
			aud = audienceOwner
		}
		t.Run(d.name, func(t *testing.T) {
			documented := openAPIOperations(loadOpenAPI(t, *d.doc))
			declared := map[string]bool{}
			for _, op := range operations {
				if !op.servedOn(aud) {
					continue
				}
				key := op.method + " " + op.path
				if declared[key] {
					t.Errorf("%s is declared twice", key)
				}
				declared[key] = true
				doc := documented[key]
				if doc == nil {
					t.Errorf("%s (%s) is declared but not documented", key, op.id)
					continue
				}
				checkOperation(t, d.name, op, doc)
			}
			for _, key := range slices.Sorted(maps.Keys(documented)) {
				if !declared[key] {
					t.Errorf("%s (%s) is documented but not declared", key, documented[key].OperationID)
				}
			}
		})
	}
}

func checkOperation(t *testing.T, docName string, op operation, doc *openapi3.Operation) {
	t.Helper()
	if doc.OperationID != op.id {
		t.Errorf("%s %s: operationId %q documented, %q declared", op.method, op.path, doc.OperationID, op.id)
	}
	idem := slices.ContainsFunc(doc.Parameters, func(p *openapi3.ParameterRef) bool {
		return p.Value.In == "header" && p.Value.Name == "Idempotency-Key"
	})
	if idem != op.idempotent {
		t.Errorf("%s: Idempotency-Key documented %v, declared %v", op.id, idem, op.idempotent)
	}
	if op.status == 0 || doc.Responses.Status(op.status) == nil {
		t.Errorf("%s: success status %d is not documented", op.id, op.status)
	}
	var reqSchema *openapi3.Schema
	if doc.RequestBody != nil && doc.RequestBody.Value != nil {
		if mt := doc.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			reqSchema = mt.Schema.Value
		}
	}
	switch {
	case op.request == nil && reqSchema != nil:
		t.Errorf("%s: the document has a JSON request body, the declaration none", op.id)
	case op.request != nil && reqSchema == nil:
		t.Errorf("%s: the declaration has a request body %v, the document none", op.id, op.request)
	case op.request != nil:
		checkFields(t, docName+" "+op.id+" request", op.request, reqSchema)
	}
	var respSchema *openapi3.Schema
	if resp := doc.Responses.Status(op.status); resp != nil && resp.Value != nil {
		if mt := resp.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			respSchema = mt.Schema.Value
		}
	}
	switch {
	case op.response == nil && respSchema != nil && !op.document:
		t.Errorf("%s: the document has a JSON %d body, the declaration none", op.id, op.status)
	case op.response != nil && respSchema == nil:
		t.Errorf("%s: the declaration has a response body %v, the document none", op.id, op.response)
	case op.response != nil:
		checkFields(t, docName+" "+op.id+" response", op.response, respSchema)
	}
}

// checkFields compares the property names of an object schema with the
// JSON field names of typ; a schema that is not an object with properties
// (a oneOf, a free map) is not compared.
func checkFields(t *testing.T, key string, typ reflect.Type, schema *openapi3.Schema) {
	t.Helper()
	if len(schema.Properties) == 0 {
		return
	}
	documented := slices.Sorted(maps.Keys(schema.Properties))
	fields := jsonFields(typ)
	if slices.Equal(documented, fields) {
		if why, known := operationSchemaExceptions[key]; known {
			t.Errorf("%s: listed as an exception (%s) but the two agree now: remove it", key, why)
		}
		return
	}
	if _, known := operationSchemaExceptions[key]; known {
		return
	}
	t.Errorf("%s: the document's properties %v, the JSON fields of %v %v", key, documented, typ, fields)
}

// jsonFields are the names encoding/json gives the fields of a struct
// type (following embedded structs), sorted.
func jsonFields(typ reflect.Type) []string {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for _, f := range reflect.VisibleFields(typ) {
		if len(f.Index) > 1 && !promoted(typ, f.Index) {
			continue
		}
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		switch {
		case tag == "-":
			continue
		case f.Anonymous && name == "" && structType(f.Type):
			continue // its fields are promoted
		case !f.IsExported():
			continue
		case name == "":
			name = f.Name
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// promoted reports whether the field at index is reached through embedded
// structs that encoding/json flattens (untagged anonymous struct fields).
func promoted(typ reflect.Type, index []int) bool {
	for _, i := range index[:len(index)-1] {
		for typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		f := typ.Field(i)
		if !f.Anonymous || f.Tag.Get("json") != "" && !strings.HasPrefix(f.Tag.Get("json"), ",") {
			return false
		}
		typ = f.Type
	}
	return true
}

func structType(typ reflect.Type) bool {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	return typ.Kind() == reflect.Struct
}

// TestAgentOperationsAreToolsOrResources checks the declarations against
// mcpserver's tables: every operation of the agent API is a tool, or a
// resource when it is a public document, and every tool or resource names
// a declared operation.
func TestAgentOperationsAreToolsOrResources(t *testing.T) {
	t.Parallel()
	tools, resources := mcpserver.ToolOperations(), mcpserver.ResourceOperations()
	declared := map[string]bool{}
	for _, op := range operations {
		if !op.servedOn(audienceAgent) {
			continue
		}
		declared[op.id] = true
		want, list := "tool", tools
		if op.document {
			want, list = "resource", resources
		}
		if !slices.Contains(list, op.id) {
			t.Errorf("agent operation %s (%s %s) is not an MCP %s", op.id, op.method, op.path, want)
		}
	}
	for _, id := range slices.Concat(tools, resources) {
		if !declared[id] {
			t.Errorf("MCP entry %s names no declared agent operation", id)
		}
	}
	if len(declared) != len(tools)+len(resources) {
		t.Errorf("%d agent operations, %d tools and %d resources", len(declared), len(tools), len(resources))
	}
	t.Logf("%d declarations; %d agent operations", len(operations), len(declared))
}
