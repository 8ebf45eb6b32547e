// Command addrwatch is the operator and owner CLI for an addrwatch server.
//
// It speaks HTTP: the admin API (/admin/v1 on the admin listener, with the
// admin token) and the owner API (/owner/v1 on the public listener, with the
// owner secret or a session token), and so exercises the same contract any
// other client sees and cannot come to depend on internals. Two exceptions
// work without a server: "cluster certs" makes node certificates offline
// with cluster/nodecert (standard library only), so they are made exactly
// as nodes check them; and "cluster recover", for a cluster that has lost
// its quorum and cannot serve the admin API, works on a stopped node's data
// directory through cluster.Recover, and so does "migrate-log", through
// persistence.MigrateBoltToWAL.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"

	"github.com/addrwatch/addrwatch/internal/buildinfo"
)

// versionUsage is --version's line in the help.
const versionUsage = "print this build's version, commit, commit time, whether the tree was modified, and Go release, then exit (before the command name only)"

// Exit codes follow the usual CLI convention so scripts can tell a mistake in
// the invocation (fix the command line) from a failure of the request itself
// (look at the server or the network).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

func main() {
	// Ctrl-C cancels the in-flight request instead of leaving it to the
	// request timeout.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole program minus process globals, so tests can drive it with
// their own arguments, environment and output buffers.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return runWithClients(ctx, args, getenv, stdout, stderr,
		&http.Client{Timeout: requestTimeout}, &http.Client{Timeout: transferTimeout})
}

// runWithClient is run with the HTTP client supplied, so a test can shorten
// the timeout. The same client serves the backup and restore transfers.
func runWithClient(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, hc *http.Client) int {
	return runWithClients(ctx, args, getenv, stdout, stderr, hc, hc)
}

// runWithClients is run with both HTTP clients supplied: hc for ordinary
// requests and transfer for the backup and restore bodies.
func runWithClients(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, hc, transfer *http.Client) int {
	a := &app{getenv: getenv, stdin: os.Stdin, stdout: stdout, stderr: stderr, http: hc, transferHTTP: transfer}
	return exitCode(dispatch(ctx, a, args), stderr)
}

// exitCode reports err on stderr in the one format scripts can rely on and
// maps it to the process exit code.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	var usage *usageError
	if errors.As(err, &usage) {
		fmt.Fprintf(stderr, "error: %s\nRun '%s --help' for usage.\n", usage.msg, usage.helpFor)
		return exitUsage
	}
	fmt.Fprintf(stderr, "error: %v\n", err)
	return exitFailure
}

// dispatch finds the command named by args and runs it. Global flags may come
// before the command name as well as after it.
func dispatch(ctx context.Context, a *app, args []string) error {
	top := newFlagSet("addrwatch")
	a.globals.register(top)
	showVersion := top.Bool("version", false, versionUsage)
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printTopHelp(a.stdout)
			return nil
		}
		return &usageError{msg: err.Error(), helpFor: "addrwatch"}
	}
	if *showVersion {
		_, err := fmt.Fprintln(a.stdout, buildinfo.Read().String("addrwatch"))
		return err
	}
	rest := top.Args()
	if len(rest) == 0 {
		return &usageError{msg: "missing command", helpFor: "addrwatch"}
	}
	if rest[0] == "help" {
		return printHelpFor(a.stdout, rest[1:])
	}
	if cmd, used := lookupCommand(rest); cmd != nil {
		return cmd.run(ctx, a, rest[used:])
	}
	group := rest[0]
	if len(commandsInGroup(group)) == 0 {
		return &usageError{msg: fmt.Sprintf("unknown command %q", group), helpFor: "addrwatch"}
	}
	if len(rest) > 1 && isHelpArg(rest[1]) {
		printGroupHelp(a.stdout, group)
		return nil
	}
	if len(rest) == 1 {
		return &usageError{msg: fmt.Sprintf("%q needs a subcommand", group), helpFor: "addrwatch " + group}
	}
	return &usageError{msg: fmt.Sprintf("unknown subcommand %q for %q", rest[1], group), helpFor: "addrwatch " + group}
}
