package system_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Every response any end-to-end test receives from /v1 or /owner/v1 is
// checked against the served contract (httpd/openapi/*.json), so the code
// and the contract cannot drift apart. do() calls checkContract.

var contracts struct {
	once         sync.Once
	agent, owner routers.Router
	err          error
}

func loadContract(name string) (routers.Router, error) {
	data, err := os.ReadFile(filepath.Join("..", "httpd", "openapi", name))
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, err
	}
	return gorillamux.NewRouter(doc)
}

// checkContract validates one response against the contract of its API.
// Responses that no operation describes are left out: OPTIONS (204 with
// Allow), the 307 trailing-slash redirect, 405, and paths that are not
// operations (the unknown-path tests).
func checkContract(t testing.TB, method, url string, status int, header http.Header, body []byte) {
	t.Helper()
	contracts.once.Do(func() {
		if contracts.agent, contracts.err = loadContract("agent.json"); contracts.err == nil {
			contracts.owner, contracts.err = loadContract("owner.json")
		}
	})
	if contracts.err != nil {
		t.Fatalf("load the OpenAPI contracts: %v", contracts.err)
	}
	if method == http.MethodOptions || status == http.StatusTemporaryRedirect || status == http.StatusMethodNotAllowed {
		return
	}
	if isAdminURL(url) {
		return // the operator listener has no public contract
	}
	router := contracts.agent
	switch {
	case strings.Contains(url, "/owner/v1/"):
		router = contracts.owner
	case !strings.Contains(url, "/v1/"):
		return
	}
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		return
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	rin := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: in.Options}
	rin.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), rin); err != nil {
		t.Errorf("%s %s: the %d response does not match the OpenAPI contract: %v\nbody %.400s", method, url, status, err, body)
	}
}

// adminBases holds the admin listeners' base URLs of every started server.
var adminBases sync.Map

func isAdminURL(url string) bool {
	admin := false
	adminBases.Range(func(base, _ any) bool {
		admin = strings.HasPrefix(url, base.(string)+"/")
		return !admin
	})
	return admin
}
