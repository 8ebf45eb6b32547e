package mcpserver

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// operation is one Agent API operation as the OpenAPI document describes
// it: everything a tool needs to build the request and to tell a model
// what to send and what comes back.
type operation struct {
	id     string // operationId
	method string // GET, POST, ...
	path   string // under /v1, with {name} placeholders
	params []param
	// idempotent: the operation honours an Idempotency-Key header.
	idempotent   bool
	body         map[string]any // the request body's schema, nil without one
	bodyRequired bool
	output       map[string]any // the success response's schema
}

// param is a path or query parameter.
type param struct {
	name     string
	in       string // "path" or "query"
	required bool
	schema   map[string]any
	doc      string
}

// document is the part of the OpenAPI document the tools read.
type document struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Parameters map[string]rawParam       `json:"parameters"`
		Schemas    map[string]map[string]any `json:"schemas"`
	} `json:"components"`
}

type rawParam struct {
	Ref         string         `json:"$ref"`
	Name        string         `json:"name"`
	In          string         `json:"in"`
	Required    bool           `json:"required"`
	Description string         `json:"description"`
	Schema      map[string]any `json:"schema"`
}

type rawOperation struct {
	OperationID string     `json:"operationId"`
	Summary     string     `json:"summary"`
	Parameters  []rawParam `json:"parameters"`
	RequestBody *struct {
		Required bool `json:"required"`
		Content  map[string]struct {
			Schema map[string]any `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
	Responses map[string]struct {
		Content map[string]struct {
			Schema map[string]any `json:"schema"`
		} `json:"content"`
	} `json:"responses"`
}

const idempotencyHeader = "Idempotency-Key"

// parseDocument reads the operations of an OpenAPI document, in the order
// of its paths (sorted, so the tool list is stable).
func parseDocument(doc []byte) ([]operation, map[string]map[string]any, error) {
	var d document
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, nil, fmt.Errorf("the OpenAPI document: %w", err)
	}
	var ops []operation
	for _, path := range slices.Sorted(maps.Keys(d.Paths)) {
		item := d.Paths[path]
		var shared []rawParam
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &shared); err != nil {
				return nil, nil, fmt.Errorf("%s parameters: %w", path, err)
			}
		}
		for _, method := range []string{"get", "post", "put", "patch", "delete"} {
			raw, ok := item[method]
			if !ok {
				continue
			}
			var ro rawOperation
			if err := json.Unmarshal(raw, &ro); err != nil {
				return nil, nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			op, err := d.operation(strings.ToUpper(method), path, ro, shared)
			if err != nil {
				return nil, nil, err
			}
			ops = append(ops, op)
		}
	}
	return ops, d.Components.Schemas, nil
}

func (d *document) operation(method, path string, ro rawOperation, shared []rawParam) (operation, error) {
	op := operation{id: ro.OperationID, method: method, path: path}
	for _, p := range append(slices.Clone(shared), ro.Parameters...) {
		if p.Ref != "" {
			name, found := strings.CutPrefix(p.Ref, "#/components/parameters/")
			resolved, ok := d.Components.Parameters[name]
			if !found || !ok {
				return op, fmt.Errorf("%s: unknown parameter %s", ro.OperationID, p.Ref)
			}
			p = resolved
		}
		switch {
		case p.In == "header" && p.Name == idempotencyHeader:
			op.idempotent = true
		case p.In == "path" || p.In == "query":
			op.params = append(op.params, param{name: p.Name, in: p.In, required: p.Required || p.In == "path", schema: p.Schema, doc: p.Description})
		default:
			return op, fmt.Errorf("%s: parameter %s in %s has no tool argument", ro.OperationID, p.Name, p.In)
		}
	}
	if rb := ro.RequestBody; rb != nil {
		media, ok := rb.Content["application/json"]
		if !ok {
			return op, fmt.Errorf("%s: the request body is not JSON", ro.OperationID)
		}
		op.body, op.bodyRequired = media.Schema, rb.Required
	}
	for _, status := range []string{"200", "201"} {
		if r, ok := ro.Responses[status]; ok {
			if media, ok := r.Content["application/json"]; ok {
				op.output = media.Schema
				break
			}
		}
	}
	return op, nil
}

// componentRef is how the OpenAPI document refers to a schema, and defsRef
// how a tool's self-contained JSON Schema does.
const (
	componentRef = "#/components/schemas/"
	defsRef      = "#/$defs/"
)

// selfContained returns schema as a JSON Schema that stands alone: its
// references point into a $defs holding every component schema it uses,
// directly or through another. root names a component to inline at the
// top (MCP wants "type": "object" there, not a $ref).
func selfContained(schema map[string]any, components map[string]map[string]any) map[string]any {
	out := rewriteRefs(schema).(map[string]any)
	if ref, ok := out["$ref"].(string); ok && len(out) == 1 {
		name := strings.TrimPrefix(ref, defsRef)
		out = rewriteRefs(components[name]).(map[string]any)
	}
	defs := map[string]any{}
	var visit func(v any)
	visit = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			if ref, ok := t["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, defsRef)
				if _, seen := defs[name]; !seen {
					c := rewriteRefs(components[name])
					defs[name] = c
					visit(c)
				}
			}
			for _, child := range t {
				visit(child)
			}
		case []any:
			for _, child := range t {
				visit(child)
			}
		}
	}
	visit(out)
	if len(defs) > 0 {
		out["$defs"] = defs
	}
	return out
}

// rewriteRefs returns a deep copy of v with component references turned
// into $defs references.
func rewriteRefs(v any) any {
	switch t := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(t))
		for k, child := range t {
			if s, ok := child.(string); ok && k == "$ref" {
				c[k] = defsRef + strings.TrimPrefix(s, componentRef)
				continue
			}
			c[k] = rewriteRefs(child)
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, child := range t {
			c[i] = rewriteRefs(child)
		}
		return c
	default:
		return v
	}
}
