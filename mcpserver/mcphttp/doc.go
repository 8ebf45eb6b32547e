// Package mcphttp serves the Agent API's MCP server (package mcpserver)
// over MCP's Streamable HTTP transport: the endpoint httpd mounts at
// POST /v1/mcp, with the same Bearer key as /v1.
//
// What lives here:
//
//   - endpoint.go: the endpoint (Endpoint.Serve): the Origin check
//     against DNS rebinding, the key's shape, the transport's head rules
//     (a JSON body, an Accept of both answer types), then the direct path
//     or the SDK's stateless transport behind its bearer-token check, with
//     the verified key (Key) as the SDK's token info;
//   - direct.go: the direct path of a plain tools/call, answered here
//     without the SDK's per-request session (a test requires both paths to
//     answer alike);
//   - toolcall.go: a tool call as the API request it stands for, run in
//     process by the host as the MCP request's client, so it meets the
//     same authentication, authorization, validation, limits and activity
//     count as the REST request;
//   - log.go: the SDK's logger, the host's from warnings up.
//
// What it depends on: mcpserver for the tools, the MCP SDK for the
// transport, fasthttp, and actors for the capability of a key and the
// FORBIDDEN of a foreign Origin. Everything else comes from the server it
// is mounted in, through the small interface it declares (Host: check and
// look up a key, tell this server's own origin, name the client, write an
// error in the API's {code, error} shape, run an API request in process).
// It never imports httpd: httpd implements Host and mounts the endpoint
// (httpd/mcp.go).
package mcphttp
