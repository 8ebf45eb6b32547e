// Package mcpserver is the Agent API as MCP tools: one tool per operation
// of /v1, made at start from the API's OpenAPI document (operations.go),
// with the names, descriptions and hints written here (tools.go), each
// call turned into the API request it stands for and its answer into the
// tool's result (call.go), and the public documents as resources
// (server.go). See DESIGN.md.
//
// It knows no transport and depends on nothing of addrwatch: a Caller
// performs the API request. addrwatch mcp serves it over stdio and sends
// each request over HTTP; the subpackage mcphttp serves it over MCP's
// Streamable HTTP transport at /v1/mcp, where httpd runs each request in
// process.
package mcpserver
