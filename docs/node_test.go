package docs_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startNode runs bin/addrwatchd with args in the sandbox and waits until
// its admin listener says it is ready and readyFile (under dir; "" for
// none) exists. The node is stopped when the test ends, or before by the
// function returned; its log is shown when the test failed.
func startNode(t *testing.T, dir, name, admin, readyFile string, args ...string) (stop func()) {
	t.Helper()
	logFile, err := os.Create(filepath.Join(dir, strings.ReplaceAll(name, " ", "")+".log"))
	if err != nil {
		t.Fatal(err)
	}
	node := exec.Command(filepath.Join(dir, "bin", "addrwatchd"), args...)
	node.Dir, node.Stdout, node.Stderr, node.Env = dir, logFile, logFile, cleanEnv()
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- node.Wait() }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = node.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(20 * time.Second):
				_ = node.Process.Kill()
				<-exited
			}
			logFile.Close()
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			if b, err := os.ReadFile(logFile.Name()); err == nil {
				t.Logf("%s's log:\n%s", name, b)
			}
		}
	})
	deadline := time.Now().Add(readyTimeout)
	for !ready(admin, dir, readyFile) {
		select {
		case err := <-exited:
			b, _ := os.ReadFile(logFile.Name())
			t.Fatalf("%s exited: %v\n%s", name, err, b)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logFile.Name())
			t.Fatalf("%s not ready after %v\n%s", name, readyTimeout, b)
		}
	}
	return stop
}

// ready says whether the node's /readyz answers 200 and readyFile exists.
func ready(admin, dir, readyFile string) bool {
	if readyFile != "" {
		if _, err := os.Stat(filepath.Join(dir, readyFile)); err != nil {
			return false
		}
	}
	resp, err := http.Get("http://" + admin + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// stoppedNode leaves in ./cluster-data/n1 what the operator's guide's
// recover and migrate-log blocks work on: the data dir of a stopped node
// n1 whose log is in raft.db (a data dir made before the WAL).
func stoppedNode(t *testing.T, dir string) {
	t.Helper()
	ports := freePorts(t, 3)
	admin := "127.0.0.1:" + ports[1]
	stop := startNode(t, dir, "the stopped node n1", admin, "",
		"--node-id", "n1", "--raft-log", "bolt", "--data", "./cluster-data/n1",
		"--http", "127.0.0.1:"+ports[0], "--admin", admin, "--raft", "127.0.0.1:"+ports[2])
	stop()
	if _, err := os.Stat(filepath.Join(dir, "cluster-data", "n1", "raft.db")); err != nil {
		t.Fatalf("the stopped node n1 has no raft.db: %v", err)
	}
}
