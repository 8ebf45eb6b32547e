package regtest

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

var shared struct {
	once sync.Once
	node *Node
	err  error
}

// Shared is the test package's one node, started by the first test that
// asks for it and stopped by Main after the last. A node that cannot
// start fails the test, with the reason; under -short (no server
// processes) the test is skipped, saying why.
func Shared(t testing.TB) *Node {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a btcd regtest node, a server process, which -short leaves out")
	}
	shared.once.Do(func() { shared.node, shared.err = Start() })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.node
}

// Own is a node of the test's own, stopped when the test ends: for a test
// that mines or reorgs in ways the others sharing a node would see, so
// that it can run beside them. It fails or skips as Shared does.
func Own(t testing.TB) *Node {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a btcd regtest node, a server process, which -short leaves out")
	}
	n, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Stop(); err != nil {
			t.Errorf("regtest: stopping btcd: %v", err)
		}
	})
	return n
}

func stopShared() {
	if shared.node == nil {
		return
	}
	if err := shared.node.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "regtest: stopping btcd: %v\n", err)
	}
}
