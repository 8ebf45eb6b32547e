// Package httpd is the fasthttp front end: the agent API at /v1, the owner
// API at /owner/v1 and the admin API at /admin/v1. It authenticates each
// request, turns it into a command or a query for the account it names, and
// renders the result. It does not import protoactor or raft: it talks to
// the node through the narrow Store and Operator interfaces.
package httpd
