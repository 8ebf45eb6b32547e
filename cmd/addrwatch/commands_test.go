package main

import (
	"strings"
	"testing"
)

// commandCase is one command run against fake servers: what it must send and
// what it must print for the server's answer.
type commandCase struct {
	name     string
	args     []string
	api      apiKind
	method   string
	path     string
	body     string // the JSON body the command must send; "" means none
	status   int    // the fake server's answer
	response string
	stdout   string
	stderr   string
}

var commandCases = []commandCase{
	{
		name: "account create", args: []string{"account", "create", "--plan", "base", "--password", "pw 1"},
		api: adminAPI, method: "POST", path: "/admin/v1/accounts", body: `{"plan":"base","password":"pw 1"}`,
		status: 201, response: `{"account_id":"acc_1","owner_secret":"os_fresh"}`,
		stdout: "account_id: acc_1\nowner_secret: os_fresh\n",
		stderr: "note: the owner secret is shown only once; store it now.\n",
	},
	{
		name: "account create --json", args: []string{"account", "create", "--json", "--plan=extended", "--password=p"},
		api: adminAPI, method: "POST", path: "/admin/v1/accounts", body: `{"plan":"extended","password":"p"}`,
		status: 201, response: `{"account_id":"acc_1","owner_secret":"os_fresh"}`,
		stdout: `{"account_id":"acc_1","owner_secret":"os_fresh"}` + "\n",
		stderr: "note: the owner secret is shown only once; store it now.\n",
	},
	{
		name: "cluster status", args: []string{"cluster", "status"},
		api: adminAPI, method: "GET", path: "/admin/v1/cluster",
		status: 200, response: `{"leader":"node1","applied_index":7}`,
		stdout: "{\n  \"leader\": \"node1\",\n  \"applied_index\": 7\n}\n",
	},
	{
		name: "cluster status --json", args: []string{"cluster", "status", "--json"},
		api: adminAPI, method: "GET", path: "/admin/v1/cluster",
		status: 200, response: `{"leader":"node1","applied_index":7}`,
		stdout: `{"leader":"node1","applied_index":7}` + "\n",
	},
	{
		name: "snapshot without body", args: []string{"snapshot"},
		api: adminAPI, method: "POST", path: "/admin/v1/snapshot",
		status: 204, stdout: "snapshot taken\n",
	},
	{
		name: "snapshot with body", args: []string{"snapshot"},
		api: adminAPI, method: "POST", path: "/admin/v1/snapshot",
		status: 200, response: `{"index":42}`, stdout: "{\n  \"index\": 42\n}\n",
	},
	{
		name: "cluster snapshot", args: []string{"cluster", "snapshot"},
		api: adminAPI, method: "POST", path: "/admin/v1/snapshot",
		status: 200, response: `{"snapshot_taken":true}`, stdout: "{\n  \"snapshot_taken\": true\n}\n",
	},
	{
		name: "cluster snapshot without body", args: []string{"cluster", "snapshot"},
		api: adminAPI, method: "POST", path: "/admin/v1/snapshot",
		status: 204, stdout: "snapshot taken\n",
	},
	{
		name: "cluster add", args: []string{"cluster", "add", "n4", "10.0.0.8:7000"},
		api: adminAPI, method: "POST", path: "/admin/v1/cluster/nodes", body: `{"id":"n4","raft_addr":"10.0.0.8:7000"}`,
		status: 200, response: `{"id":"n4","raft_addr":"10.0.0.8:7000","state":"nonvoter","suffrage":"nonvoter"}`,
		stdout: "added node n4 at 10.0.0.8:7000 as a nonvoter\n",
	},
	{
		name: "cluster add --json", args: []string{"cluster", "add", "--json", "n4", "[::1]:7004"},
		api: adminAPI, method: "POST", path: "/admin/v1/cluster/nodes", body: `{"id":"n4","raft_addr":"[::1]:7004"}`,
		status: 200, response: `{"id":"n4","raft_addr":"[::1]:7004"}`,
		stdout: `{"id":"n4","raft_addr":"[::1]:7004"}` + "\n",
	},
	{
		name: "cluster remove", args: []string{"cluster", "remove", "n3"},
		api: adminAPI, method: "DELETE", path: "/admin/v1/cluster/nodes/n3",
		status: 204, stdout: "removed node n3\n",
	},
	{
		name: "cluster remove escapes the id", args: []string{"cluster", "remove", "a/b c"},
		api: adminAPI, method: "DELETE", path: "/admin/v1/cluster/nodes/a%2Fb%20c",
		status: 204, stdout: "removed node a/b c\n",
	},
	{
		name: "cluster remove --json prints nothing for 204", args: []string{"cluster", "remove", "n3", "--json"},
		api: adminAPI, method: "DELETE", path: "/admin/v1/cluster/nodes/n3",
		status: 204,
	},
	{
		name: "cluster transfer to any voter sends no body", args: []string{"cluster", "transfer"},
		api: adminAPI, method: "POST", path: "/admin/v1/cluster/transfer",
		status: 200, response: `{"transferred":true}`,
		stdout: "leadership transferred\n",
	},
	{
		name: "cluster transfer to a node", args: []string{"cluster", "transfer", "n2"},
		api: adminAPI, method: "POST", path: "/admin/v1/cluster/transfer", body: `{"id":"n2"}`,
		status: 200, response: `{"transferred":true}`,
		stdout: "leadership transferred to n2\n",
	},
	{
		name: "cluster transfer --json", args: []string{"cluster", "transfer", "n2", "--json"},
		api: adminAPI, method: "POST", path: "/admin/v1/cluster/transfer", body: `{"id":"n2"}`,
		status: 200, response: `{"transferred":true}`,
		stdout: `{"transferred":true}` + "\n",
	},
	{
		name: "key create", args: []string{"key", "create", "--capability", "write", "--name", "bot"},
		api: ownerAPI, method: "POST", path: "/owner/v1/keys", body: `{"capability":"write","name":"bot"}`,
		status:   201,
		response: `{"key_id":"k1","key":"aw_k1_fresh","capability":"write","name":"bot"}`,
		stdout:   "key_id: k1\nkey: aw_k1_fresh\ncapability: write\nname: bot\n",
		stderr:   "note: the key is shown only once; store it now.\n",
	},
	{
		name: "key create --json", args: []string{"key", "create", "--capability=read", "--name=dash", "--json"},
		api: ownerAPI, method: "POST", path: "/owner/v1/keys", body: `{"capability":"read","name":"dash"}`,
		status:   201,
		response: `{"key_id":"k1","key":"aw_k1_fresh","capability":"read","name":"dash"}` + "\n",
		stdout:   `{"key_id":"k1","key":"aw_k1_fresh","capability":"read","name":"dash"}` + "\n",
		stderr:   "note: the key is shown only once; store it now.\n",
	},
	{
		name: "key list", args: []string{"key", "list"},
		api: ownerAPI, method: "GET", path: "/owner/v1/keys",
		status:   200,
		response: `{"keys":[{"key_id":"k1","capability":"read","name":"dash","created_at":"2024-01-02T03:04:05Z"},{"key_id":"k22","capability":"write","name":"bot","created_at":"2024-02-03T04:05:06Z"}]}`,
		stdout: "KEY_ID  CAPABILITY  NAME  CREATED_AT\n" +
			"k1      read        dash  2024-01-02T03:04:05Z\n" +
			"k22     write       bot   2024-02-03T04:05:06Z\n",
	},
	{
		name: "key list --json", args: []string{"--json", "key", "list"},
		api: ownerAPI, method: "GET", path: "/owner/v1/keys",
		status: 200, response: `{"keys":[]}`, stdout: `{"keys":[]}` + "\n",
	},
	{
		name: "key revoke", args: []string{"key", "revoke", "k1"},
		api: ownerAPI, method: "DELETE", path: "/owner/v1/keys/k1",
		status: 204, stdout: "revoked key k1\n",
	},
	{
		name: "key revoke --json prints nothing for 204", args: []string{"key", "revoke", "k1", "--json"},
		api: ownerAPI, method: "DELETE", path: "/owner/v1/keys/k1",
		status: 204,
	},
	{
		name: "key revoke escapes the id", args: []string{"key", "revoke", "a/b c?"},
		api: ownerAPI, method: "DELETE", path: "/owner/v1/keys/a%2Fb%20c%3F",
		status: 204, stdout: "revoked key a/b c?\n",
	},
	{
		name: "key revoke id after --", args: []string{"key", "revoke", "--", "-k1"},
		api: ownerAPI, method: "DELETE", path: "/owner/v1/keys/-k1",
		status: 204, stdout: "revoked key -k1\n",
	},
	{
		name: "grant portfolio", args: []string{"grant", "portfolio", "card_1", "read"},
		api: ownerAPI, method: "PUT", path: "/owner/v1/grants/portfolio/card_1", body: `{"level":"read"}`,
		status: 200, response: `{"card_id":"card_1","level":"read"}`,
		stdout: "Account card card_1: grant read\n",
	},
	{
		name: "grant portfolio --json", args: []string{"grant", "portfolio", "card_1", "none", "--json"},
		api: ownerAPI, method: "PUT", path: "/owner/v1/grants/portfolio/card_1", body: `{"level":"none"}`,
		status: 200, response: `{"card_id":"card_1","level":"none"}`,
		stdout: `{"card_id":"card_1","level":"none"}` + "\n",
	},
	{
		name: "grant space", args: []string{"grant", "space", "sp/1", "write"},
		api: ownerAPI, method: "PUT", path: "/owner/v1/grants/bookmark-spaces/sp%2F1", body: `{"level":"write"}`,
		status: 200, response: `{}`,
		stdout: "Space sp/1: grant write\n",
	},
	{
		name: "plan set", args: []string{"plan", "set", "extended"},
		api: ownerAPI, method: "PUT", path: "/owner/v1/plan", body: `{"plan":"extended"}`,
		status: 200, response: `{"plan":"extended"}`,
		stdout: "plan: extended\n",
	},
	{
		name: "password change", args: []string{"password", "change", "--current-password", "old words", "--new-password", "new words"},
		api: ownerAPI, method: "POST", path: "/owner/v1/password", body: `{"current_password":"old words","new_password":"new words"}`,
		status: 200, response: `{"owner_secret":"aws.a.new"}`,
		stdout: "owner_secret: aws.a.new\n",
		stderr: "note: the owner secret is shown only once; store it now.\n",
	},
	{
		name: "owner-secret rotate --json", args: []string{"owner-secret", "rotate", "--json", "--current-password=my words"},
		api: ownerAPI, method: "POST", path: "/owner/v1/owner-secret", body: `{"current_password":"my words"}`,
		status: 200, response: `{"owner_secret":"aws.a.rotated"}`,
		stdout: `{"owner_secret":"aws.a.rotated"}` + "\n",
		stderr: "note: the owner secret is shown only once; store it now.\n",
	},
	{
		name: "account create --login", args: []string{"account", "create", "--plan", "base", "--password", "pw 1", "--login", "Alice@example.com"},
		api: adminAPI, method: "POST", path: "/admin/v1/accounts", body: `{"plan":"base","password":"pw 1","login":"Alice@example.com"}`,
		status: 201, response: `{"account_id":"acc_1","owner_secret":"os_fresh","login":"Alice@example.com"}`,
		stdout: "account_id: acc_1\nowner_secret: os_fresh\n",
		stderr: "note: the owner secret is shown only once; store it now.\n",
	},
	{
		name: "login set", args: []string{"login", "set", "bob@example.com", "--current-password", "my words"},
		api: ownerAPI, method: "PUT", path: "/owner/v1/login", body: `{"login":"bob@example.com","current_password":"my words"}`,
		status: 200, response: `{"login":"bob@example.com"}`,
		stdout: "login: bob@example.com\n",
	},
	{
		name: "account show", args: []string{"account", "show"},
		api: ownerAPI, method: "GET", path: "/owner/v1/account",
		status: 200, response: `{"account_id":"acc_1","login":"bob","plan":"base"}`,
		stdout: "account_id: acc_1\nlogin: bob\nplan: base\n",
	},
}

// TestCommandsSendExactRequests checks, for every command, the method, path,
// headers and body on the wire, that it went to the right listener, and what
// it printed.
func TestCommandsSendExactRequests(t *testing.T) {
	for _, tc := range commandCases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServers(t, tc.status, tc.response)
			got := runCLI(t, s.env, tc.args...)
			if got.code != exitOK {
				t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
			}
			if got.stdout != tc.stdout {
				t.Errorf("stdout = %q, want %q", got.stdout, tc.stdout)
			}
			if got.stderr != tc.stderr {
				t.Errorf("stderr = %q, want %q", got.stderr, tc.stderr)
			}

			target, other, token := s.owner, s.admin, testOwnerSecret
			if tc.api == adminAPI {
				target, other, token = s.admin, s.owner, testAdminToken
			}
			if n := len(other.seen()); n != 0 {
				t.Fatalf("the other listener saw %d requests", n)
			}
			req := target.only(t)
			if req.method != tc.method || req.path != tc.path {
				t.Errorf("request = %s %s, want %s %s", req.method, req.path, tc.method, tc.path)
			}
			if h := req.header.Get("Authorization"); h != "Bearer "+token {
				t.Errorf("Authorization = %q, want the bearer credential of this API", h)
			}
			if h := req.header.Get("Accept"); h != "application/json" {
				t.Errorf("Accept = %q", h)
			}
			if h := req.header.Get("User-Agent"); h != userAgent {
				t.Errorf("User-Agent = %q", h)
			}
			if tc.body == "" {
				if len(req.body) != 0 || req.header.Get("Content-Type") != "" {
					t.Errorf("sent body %q with Content-Type %q, want none", req.body, req.header.Get("Content-Type"))
				}
				return
			}
			if h := req.header.Get("Content-Type"); h != "application/json" {
				t.Errorf("Content-Type = %q", h)
			}
			assertJSONEqual(t, req.body, tc.body)
		})
	}
}

// TestCommandsReportServerErrors checks that every command turns the
// server's error body into one stderr line and exit 1, printing nothing on
// stdout and no credential anywhere.
func TestCommandsReportServerErrors(t *testing.T) {
	for _, tc := range commandCases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServers(t, 409, `{"code":"STALE_VERSION","error":"the card changed"}`)
			got := runCLI(t, s.env, tc.args...)
			if got.code != exitFailure {
				t.Errorf("exit %d, want %d", got.code, exitFailure)
			}
			if got.stdout != "" {
				t.Errorf("stdout = %q, want nothing", got.stdout)
			}
			want := "error: STALE_VERSION: the card changed (HTTP 409)\n"
			if got.stderr != want {
				t.Errorf("stderr = %q, want %q", got.stderr, want)
			}
		})
	}
}

func TestErrorBodyNotInServerShape(t *testing.T) {
	s := newServers(t, 502, `<html>bad gateway, echoing Authorization: Bearer leaked</html>`)
	got := runCLI(t, s.env, "key", "list")
	want := "error: HTTP_502: Bad Gateway (HTTP 502)\n"
	if got.code != exitFailure || got.stderr != want {
		t.Errorf("exit %d stderr %q, want exit 1 and %q", got.code, got.stderr, want)
	}
}

func TestUnexpectedSuccessBody(t *testing.T) {
	for _, tc := range []struct {
		args []string
		body string
	}{
		{[]string{"account", "create", "--plan", "base", "--password", "p"}, `not json`},
		{[]string{"account", "create", "--plan", "base", "--password", "p"}, `{"account_id":"a"}`},
		{[]string{"key", "create", "--capability", "read", "--name", "n"}, `{"key_id":"k"}`},
		{[]string{"key", "list"}, `{"keys":"nope"}`},
		{[]string{"cluster", "status"}, `<html>`},
	} {
		s := newServers(t, 200, tc.body)
		got := runCLI(t, s.env, tc.args...)
		if got.code != exitFailure || !strings.Contains(got.stderr, "unexpected response from server") {
			t.Errorf("%v with body %q: exit %d stderr %q", tc.args, tc.body, got.code, got.stderr)
		}
	}
}

func TestNetworkErrorDoesNotLeakCredentials(t *testing.T) {
	s := newServers(t, 200, `{}`)
	s.owner.Close() // connection refused from now on
	got := runCLI(t, s.env, "key", "list")
	if got.code != exitFailure || !strings.HasPrefix(got.stderr, "error: ") {
		t.Fatalf("exit %d stderr %q", got.code, got.stderr)
	}
	if strings.Contains(got.stderr, testOwnerSecret) {
		t.Errorf("stderr %q contains the owner secret", got.stderr)
	}
}

func TestOversizedResponseIsRefused(t *testing.T) {
	s := newServers(t, 200, `{"leader":"`+strings.Repeat("x", responseBytesMax)+`"}`)
	got := runCLI(t, s.env, "cluster", "status")
	if got.code != exitFailure || !strings.Contains(got.stderr, "response larger than") || got.stdout != "" {
		t.Errorf("exit %d stdout %d bytes stderr %q", got.code, len(got.stdout), got.stderr)
	}
}
