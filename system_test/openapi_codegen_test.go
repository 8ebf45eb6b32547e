package system_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	// The generated clients import it; kept in go.mod by this import.
	_ "github.com/oapi-codegen/runtime"
)

// A real generator over the served documents: oapi-codegen (pinned in
// go.mod's tool directive) writes a Go client of each, which must compile,
// and whose types must be typed: no schema that came out as interface{}
// (an untyped request body, an error code a client cannot compare), which
// is what a typing regression in the documents produces.
func TestOpenAPIGeneratesATypedGoClient(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server and runs the generator")
	}
	t.Parallel()
	s := startServer(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// Inside the module, so the generated code builds against go.mod's
	// oapi-codegen runtime; a directory starting with a dot is outside
	// every ./... pattern.
	dir, err := os.MkdirTemp(root, ".codegen-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	untyped := regexp.MustCompile(`(?m)^type \w+ = interface\{\}$|^\s+Code interface\{\}`)
	for name, path := range map[string]string{"agent": "/v1/openapi.json", "owner": "/owner/v1/openapi.json"} {
		r := do(t, "GET", s.URL+path, "", nil)
		expect(t, r, http.StatusOK, "")
		doc := filepath.Join(dir, name+".json")
		if err := os.WriteFile(doc, r.Body, 0o600); err != nil {
			t.Fatal(err)
		}
		pkg := filepath.Join(dir, name)
		if err := os.Mkdir(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		gen := exec.Command("go", "tool", "oapi-codegen", "-generate", "types,client", "-package", name, doc)
		gen.Dir = root
		out, err := gen.Output()
		if err != nil {
			t.Fatalf("oapi-codegen on %s: %v\n%s", path, err, errOutput(err))
		}
		if err := os.WriteFile(filepath.Join(pkg, "client.gen.go"), out, 0o600); err != nil {
			t.Fatal(err)
		}
		if loose := untyped.FindAllString(string(out), 5); len(loose) > 0 {
			t.Errorf("the client generated from %s has untyped types: %q", path, loose)
		}
		build := exec.Command("go", "build", "./"+filepath.Base(dir)+"/"+name)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Errorf("the client generated from %s does not compile: %v\n%s", path, err, out)
		}
	}
}

func errOutput(err error) []byte {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.Stderr
	}
	return nil
}
