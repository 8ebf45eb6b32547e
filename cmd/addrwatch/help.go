package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// printTopHelp lists every command and the global flags.
func printTopHelp(w io.Writer) {
	fmt.Fprint(w, `addrwatch is the operator and owner CLI for an addrwatch server.

Usage:
  addrwatch COMMAND [ARGS] [flags]

Operator commands (admin API, admin token):
`)
	printCommandList(w, adminAPI)
	fmt.Fprint(w, "\nOperator commands that need no server:\n")
	printCommandList(w, offline)
	fmt.Fprint(w, "\nOwner commands (owner API, owner secret or session token):\n")
	printCommandList(w, ownerAPI)
	fmt.Fprint(w, "\nCommands on a stopped node's data directory (recovery, log migration):\n")
	printCommandList(w, localData)
	fmt.Fprint(w, "\nAgent commands (Agent API, ADDRWATCH_URL and ADDRWATCH_API_KEY):\n")
	printCommandList(w, agentAPI)
	fmt.Fprint(w, "\nGlobal flags (accepted before or after the command):\n")
	fs := newFlagSet("addrwatch")
	new(globals).register(fs)
	printFlags(w, fs, func(string) bool { return true })
	fmt.Fprintf(w, "  --version\n        %s\n", versionUsage)
	fmt.Fprint(w, `
Exit status: 0 on success, 1 when a request fails, 2 on a usage error.
Run 'addrwatch COMMAND --help' for a command's flags and an example.
`)
}

func printCommandList(w io.Writer, api apiKind) {
	for _, c := range commands {
		if c.api == api {
			fmt.Fprintf(w, "  %-20s %s\n", c.name(), c.summary)
		}
	}
}

// printGroupHelp answers "addrwatch key --help" with the group's commands.
func printGroupHelp(w io.Writer, group string) {
	fmt.Fprintf(w, "Usage:\n  addrwatch %s SUBCOMMAND [ARGS] [flags]\n\nSubcommands:\n", group)
	for _, c := range commandsInGroup(group) {
		fmt.Fprintf(w, "  %-20s %s\n", c.name(), c.summary)
	}
	fmt.Fprintf(w, "\nRun 'addrwatch %s SUBCOMMAND --help' for its flags and an example.\n", group)
}

// printHelpFor answers "addrwatch help [COMMAND...]".
func printHelpFor(w io.Writer, words []string) error {
	if len(words) == 0 {
		printTopHelp(w)
		return nil
	}
	if c, used := lookupCommand(words); c != nil && used == len(words) {
		fs, _ := c.flagSet(new(globals))
		c.printHelp(w, fs)
		return nil
	}
	if len(words) == 1 && len(commandsInGroup(words[0])) > 0 {
		printGroupHelp(w, words[0])
		return nil
	}
	return &usageError{msg: fmt.Sprintf("no help for %q: unknown command", strings.Join(words, " ")), helpFor: "addrwatch"}
}

// printHelp prints the command's usage line, description, every flag and an
// example. fs must come from c.flagSet so the flag list is the parsed one.
func (c *command) printHelp(w io.Writer, fs *flag.FlagSet) {
	usage := []string{"addrwatch", c.name()}
	usage = append(usage, c.args...)
	usage = append(usage, bracketed(c.optional)...)
	if c.synopsis != "" {
		usage = append(usage, c.synopsis)
	}
	usage = append(usage, "[flags]")
	fmt.Fprintf(w, "Usage:\n  %s\n\n%s\n", strings.Join(usage, " "), c.details)

	own := func(name string) bool { return !isGlobalFlag(name) }
	if hasFlags(fs, own) {
		fmt.Fprint(w, "\nFlags:\n")
		printFlags(w, fs, own)
	}
	fmt.Fprint(w, "\nGlobal flags:\n")
	printFlags(w, fs, isGlobalFlag)
	fmt.Fprintf(w, "\nExample:\n  %s\n", c.example)
}

func hasFlags(fs *flag.FlagSet, include func(string) bool) bool {
	found := false
	fs.VisitAll(func(f *flag.Flag) { found = found || include(f.Name) })
	return found
}

// printFlags lists flags in the "--name VALUE" form this CLI documents.
// flag.PrintDefaults would show the single-dash form and, for flags with a
// non-empty default, the value itself; printing our own list keeps both under
// control.
func printFlags(w io.Writer, fs *flag.FlagSet, include func(string) bool) {
	fs.VisitAll(func(f *flag.Flag) {
		if !include(f.Name) {
			return
		}
		valueName, usage := flag.UnquoteUsage(f)
		head := "--" + f.Name
		if valueName != "" {
			head += " " + valueName
		}
		fmt.Fprintf(w, "  %s\n        %s\n", head, usage)
	})
}
