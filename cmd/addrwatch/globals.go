package main

import (
	"errors"
	"flag"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Defaults match the server's own listener defaults (ARCHITECTURE.md, "Server
// flags"), so a CLI run beside a default server needs no configuration.
const (
	defaultServerURL = "http://127.0.0.1:8080"
	defaultAdminURL  = "http://127.0.0.1:8081"
	defaultDataDir   = "./data"

	// adminTokenFile is where the server writes a generated admin token
	// inside its data directory.
	adminTokenFile = "admin-token"
)

// globals holds the flags every command accepts. The raw values are kept as
// typed; the environment and defaults are applied only when a value is
// needed, so precedence is always flag, then environment, then default.
type globals struct {
	server      string
	admin       string
	adminToken  string
	ownerSecret string
	data        string
	json        bool
}

// globalFlagNames lets --help list the global flags apart from a command's own.
var globalFlagNames = map[string]bool{
	"server": true, "admin": true, "admin-token": true,
	"owner-secret": true, "data": true, "json": true,
}

func isGlobalFlag(name string) bool { return globalFlagNames[name] }

// register adds the global flags to fs. Global flags are parsed twice, before
// and after the command name, into the same globals; flag.Func is used instead
// of StringVar because StringVar stores its default when registered and would
// wipe a value parsed from before the command name. It also means no flag has
// a default to print, so a secret taken from the environment can never show up
// in --help.
func (g *globals) register(fs *flag.FlagSet) {
	fs.Func("server", "owner API base `URL` (env ADDRWATCH_SERVER; default "+defaultServerURL+")", setString(&g.server))
	fs.Func("admin", "admin API base `URL` (env ADDRWATCH_ADMIN_URL; default "+defaultAdminURL+")", setString(&g.admin))
	fs.Func("admin-token", "admin bearer `TOKEN` (env ADDRWATCH_ADMIN_TOKEN; default: read from <data>/"+adminTokenFile+")", setString(&g.adminToken))
	fs.Func("owner-secret", "owner secret or session `TOKEN` (env ADDRWATCH_OWNER_SECRET)", setString(&g.ownerSecret))
	fs.Func("data", "server data `DIR`: holds the generated admin token; for cluster recover and migrate-log, the stopped node's data (env ADDRWATCH_DATA; default "+defaultDataDir+", except for cluster recover and migrate-log)", setString(&g.data))
	fs.BoolFunc("json", "print the server's raw JSON response", func(s string) error {
		v, err := strconv.ParseBool(s)
		if err != nil {
			return errors.New("must be true or false")
		}
		g.json = v
		return nil
	})
}

func setString(p *string) func(string) error {
	return func(s string) error {
		*p = s
		return nil
	}
}

// firstSet returns the first non-empty value: the flag, then the environment,
// then the default.
func firstSet(values ...string) string {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// app is what an action needs: the global settings, the environment they fall
// back to, the output streams and the HTTP clients: one every ordinary request
// shares, and one with a long timeout for backup and restore transfers.
type app struct {
	globals      globals
	getenv       func(string) string
	stdin        io.Reader
	stdout       io.Writer
	stderr       io.Writer
	http         *http.Client
	transferHTTP *http.Client
}

// adminClient returns a client for the admin API with the admin token.
func (a *app) adminClient() (*client, error) {
	base, err := baseURL("--admin", firstSet(a.globals.admin, a.getenv("ADDRWATCH_ADMIN_URL"), defaultAdminURL))
	if err != nil {
		return nil, err
	}
	token, err := a.adminToken()
	if err != nil {
		return nil, err
	}
	return &client{http: a.http, base: base, token: token}, nil
}

// adminTransferClient is adminClient with the long transfer timeout, for
// requests whose body is a whole backup file.
func (a *app) adminTransferClient() (*client, error) {
	c, err := a.adminClient()
	if err != nil {
		return nil, err
	}
	if a.transferHTTP != nil {
		c.http = a.transferHTTP
	}
	return c, nil
}

// ownerClient returns a client for the owner API with the owner secret.
func (a *app) ownerClient() (*client, error) {
	base, err := baseURL("--server", firstSet(a.globals.server, a.getenv("ADDRWATCH_SERVER"), defaultServerURL))
	if err != nil {
		return nil, err
	}
	secret := firstSet(a.globals.ownerSecret, a.getenv("ADDRWATCH_OWNER_SECRET"))
	if secret == "" {
		return nil, usagef("no owner secret: pass --owner-secret or set ADDRWATCH_OWNER_SECRET")
	}
	return &client{http: a.http, base: base, token: secret}, nil
}

// adminToken finds the admin token. A server started without --admin-token
// generates one into its data directory, so an operator on the same machine
// needs no configuration at all.
func (a *app) adminToken() (string, error) {
	if token := firstSet(a.globals.adminToken, a.getenv("ADDRWATCH_ADMIN_TOKEN")); token != "" {
		return token, nil
	}
	path := filepath.Join(firstSet(a.globals.data, a.getenv("ADDRWATCH_DATA"), defaultDataDir), adminTokenFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		// The os error names the path and the reason, never the contents.
		return "", usagef("no admin token: pass --admin-token, set ADDRWATCH_ADMIN_TOKEN, or point --data at the server's data directory (%v)", err)
	}
	token := strings.TrimSpace(string(raw))
	if token == "" {
		return "", usagef("no admin token: %s is empty", path)
	}
	return token, nil
}

// baseURL checks a base URL and trims its trailing slash so paths can be
// appended. A bare host:port, the form the server's own --http and --admin
// flags take, is accepted as http.
func baseURL(flagName, raw string) (string, error) {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", usagef("%s must be an http or https base URL such as %s", flagName, defaultServerURL)
	}
	return strings.TrimRight(u.String(), "/"), nil
}
