package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// command is one leaf of the CLI, such as "key create". Its flags are
// declared by define so the same declaration serves both parsing and --help,
// and the two cannot drift apart.
type command struct {
	words    []string // the command's name, e.g. {"key", "create"}
	args     []string // positional placeholders, e.g. {"KEY_ID"}
	optional []string // trailing placeholders that may be left out, e.g. {"ID"}
	synopsis string   // the command's own flags as shown in the usage line
	summary  string   // one line for the command list
	details  string   // a paragraph for --help
	example  string
	api      apiKind // which listener and credential the command uses

	// define registers the command's own flags on fs and returns the action
	// that runs once they are parsed.
	define func(fs *flag.FlagSet) action
}

// action does the command's work with parsed flags and positional arguments.
type action func(ctx context.Context, a *app, args []string) error

// apiKind says which of the two HTTP APIs a command talks to; it decides the
// base URL and the bearer credential. An offline command talks to none.
type apiKind int

const (
	adminAPI apiKind = iota
	ownerAPI
	offline
	// localData commands work on a stopped node's data directory.
	localData
	// agentAPI commands use the Agent API (/v1) with an API key.
	agentAPI
)

// commands is every command in the order the top-level help lists them:
// operator commands first, then owner commands.
var commands = []*command{
	accountCreateCommand,
	clusterStatusCommand,
	clusterAddCommand,
	clusterRemoveCommand,
	clusterTransferCommand,
	clusterMoveSlotCommand,
	clusterDrainCommand,
	clusterSnapshotCommand,
	clusterBackupCommand,
	clusterRestoreCommand,
	snapshotCommand,
	clusterCertsCommand,
	clusterRecoverCommand,
	migrateLogCommand,
	keyCreateCommand,
	keyListCommand,
	keyRevokeCommand,
	grantPortfolioCommand,
	grantSpaceCommand,
	planSetCommand,
	passwordChangeCommand,
	ownerSecretRotateCommand,
	loginSetCommand,
	accountShowCommand,
	mcpCommand,
}

func (c *command) name() string { return strings.Join(c.words, " ") }

// lookupCommand returns the command whose words prefix args and how many
// arguments its name used, or nil when no command matches.
func lookupCommand(args []string) (*command, int) {
	for _, c := range commands {
		if len(args) >= len(c.words) && slices.Equal(args[:len(c.words)], c.words) {
			return c, len(c.words)
		}
	}
	return nil, 0
}

// commandsInGroup returns the commands whose first word is group, so that
// "addrwatch key" can list what "key" can do.
func commandsInGroup(group string) []*command {
	var found []*command
	for _, c := range commands {
		if len(c.words) > 1 && c.words[0] == group {
			found = append(found, c)
		}
	}
	return found
}

// flagSet builds the command's FlagSet: the global flags plus its own.
func (c *command) flagSet(g *globals) (*flag.FlagSet, action) {
	fs := newFlagSet("addrwatch " + c.name())
	g.register(fs)
	return fs, c.define(fs)
}

// run parses the command's arguments and performs it.
func (c *command) run(ctx context.Context, a *app, args []string) error {
	fs, act := c.flagSet(&a.globals)
	positional, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		c.printHelp(a.stdout, fs)
		return nil
	}
	if err != nil {
		return c.usageErr(err.Error())
	}
	if len(positional) < len(c.args) || len(positional) > len(c.args)+len(c.optional) {
		return c.usageErr(fmt.Sprintf("%s takes %s, got %d argument(s)", c.name(), describeArgs(c.args, c.optional), len(positional)))
	}
	err = act(ctx, a, positional)
	// An action reports a bad flag value as a usageError without knowing its
	// own name; the hint must point at this command's help.
	var usage *usageError
	if errors.As(err, &usage) && usage.helpFor == "" {
		usage.helpFor = "addrwatch " + c.name()
	}
	return err
}

func describeArgs(args, optional []string) string {
	if len(args)+len(optional) == 0 {
		return "no arguments"
	}
	return strings.Join(append(append([]string{}, args...), bracketed(optional)...), " ")
}

// bracketed writes optional placeholders the usual way: "[ID]".
func bracketed(optional []string) []string {
	out := make([]string, len(optional))
	for i, o := range optional {
		out[i] = "[" + o + "]"
	}
	return out
}

func (c *command) usageErr(msg string) error {
	return &usageError{msg: msg, helpFor: "addrwatch " + c.name()}
}

// usageError is a mistake in the invocation. It exits 2 and points the user
// at the help text; helpFor names the command whose --help to suggest.
type usageError struct {
	msg     string
	helpFor string
}

func (e *usageError) Error() string { return e.msg }

// usagef reports a bad flag or argument value from inside an action.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// newFlagSet returns a FlagSet that reports errors to its caller instead of
// printing and exiting, so every usage error goes through one format.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseInterleaved parses flags that may come before, between or after the
// positional arguments ("key revoke KEY_ID --json"); the flag package alone
// stops at the first positional argument. A "--" ends flag parsing, so an
// argument that starts with "-" can still be passed.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

func isHelpArg(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// checkOneOf validates an enumerated value before it reaches the server, so a
// typo is a usage error with the allowed values rather than a remote 422.
func checkOneOf(what, value string, allowed ...string) error {
	if slices.Contains(allowed, value) {
		return nil
	}
	if value == "" {
		return usagef("%s is required (one of %s)", what, strings.Join(allowed, ", "))
	}
	return usagef("%s must be one of %s, got %q", what, strings.Join(allowed, ", "), value)
}

// checkID validates an ID that becomes a path segment. IDs are opaque and
// are escaped when sent, but "." and ".." would be resolved as path steps by
// routers and proxies and so would address a different resource.
func checkID(what, id string) error {
	switch id {
	case "":
		return usagef("%s must not be empty", what)
	case ".", "..":
		return usagef("%s %q is not a valid ID", what, id)
	}
	return nil
}
