package httpd

import _ "embed"

// The machine-readable descriptions of the two public APIs. Like the docs
// they are public: they need no key, and a key sent with them is ignored
// (the spec says clients never send it here).

//go:embed openapi/agent.json
var agentOpenAPI []byte

//go:embed openapi/owner.json
var ownerOpenAPI []byte
