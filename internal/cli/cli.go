// Package cli is the rowcall command line: one Command per verb, each in its
// own file with its own flags and usage, run by Main. Every flag can also be
// set by its environment variable ($ROWCALL_ and the flag's name: package
// envflag); `rowcall --help` lists the commands with their flags and
// variables, `rowcall COMMAND --help` one command's in full, and
// `rowcall completion bash` prints a bash completion script.
//
//	os.Exit(cli.Main(ctx, os.Args[1:], cli.OS())) // host/main.go
//
// A new command is a type with the Command methods in a file of its own and
// one line in the commands table below.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rowcall/rowcall/internal/envflag"
)

// commands is every command, in the order help lists them: its name (one
// or two words) and how to make it.
var commands = []struct {
	name string
	new  func() Command
}{
	{"serve", func() Command { return &ServeCommand{} }},
	{"migrate", func() Command { return &MigrateCommand{} }},
	{"reindex", func() Command { return &ReindexCommand{} }},
	{"call", func() Command { return &CallCommand{} }},
	{"ask", func() Command { return &AskCommand{} }},
	{"receipt", func() Command { return &ReceiptCommand{} }},
	{"receipt export", func() Command { return &ReceiptExportCommand{} }},
	{"receipt keys", func() Command { return &ReceiptKeysCommand{} }},
	{"receipt checkpoint", func() Command { return &ReceiptCheckpointCommand{} }},
	{"receipt verify", func() Command { return &ReceiptVerifyCommand{} }},
	{"receipt archive", func() Command { return &ReceiptArchiveCommand{} }},
	{"key rotate", func() Command { return &KeyRotateCommand{} }},
	{"export", func() Command { return &ExportCommand{} }},
	{"import", func() Command { return &ImportCommand{} }},
	{"import openapi", func() Command { return &ImportOpenAPICommand{} }},
	{"import mcp", func() Command { return &ImportMCPCommand{} }},
	{"mcp sync", func() Command { return &MCPSyncCommand{} }},
	{"tenant create", func() Command { return &TenantCommand{verb: "create"} }},
	{"tenant list", func() Command { return &TenantCommand{verb: "list"} }},
	{"tenant quota", func() Command { return &TenantCommand{verb: "quota"} }},
	{"tenant suspend", func() Command { return &TenantCommand{verb: "suspend"} }},
	{"tenant resume", func() Command { return &TenantCommand{verb: "resume"} }},
	{"tenant delete", func() Command { return &TenantCommand{verb: "delete"} }},
	{"tenant adopt", func() Command { return &TenantAdoptCommand{} }},
	{"completion", func() Command { return &CompletionCommand{} }},
}

// A Command is one verb of rowcall.
type Command interface {
	// Usage is what follows the command's name on its usage line (its
	// positional arguments), and one line on what it does.
	Usage() (args, summary string)
	// Flags registers the command's flags on fs.
	Flags(fs *flag.FlagSet)
	// Run runs the command once its flags are parsed; args are its
	// positional arguments.
	Run(ctx context.Context, env *Env, args []string) error
}

// Env is what a command reads and writes: the standard streams and the
// environment.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	LookupEnv      func(name string) (string, bool)
}

// OS is the process's own streams and environment.
func OS() *Env {
	return &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, LookupEnv: os.LookupEnv}
}

// Getenv is the variable's value, "" when unset.
func (e *Env) Getenv(name string) string {
	v, _ := e.LookupEnv(name)
	return v
}

// exitCode ends a command with that status and no message (call's ERR result).
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

// Main runs the command args name and returns the process's exit status: 0,
// 1 when the command failed, 2 for a command line that means nothing.
func Main(ctx context.Context, args []string, env *Env) int {
	if len(args) == 0 {
		printHelp(env.Stderr)
		return 2
	}
	if a := args[0]; a == "help" || a == "-h" || a == "-help" || a == "--help" {
		printHelp(env.Stdout)
		return 0
	}
	name, cmd, rest := find(args)
	if cmd == nil {
		fmt.Fprintf(env.Stderr, "rowcall: unknown command %q\n\n", args[0])
		printHelp(env.Stderr)
		return 2
	}
	fs, pos, err := parse(ctx, name, cmd, rest, env)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(env.Stdout, name, cmd, fs)
		return 0
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "rowcall %s: %v\n\n", name, err)
		printUsage(env.Stderr, name, cmd, fs)
		return 2
	}
	err = cmd.Run(ctx, env, pos)
	var code exitCode
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	default:
		fmt.Fprintln(env.Stderr, "rowcall:", err)
		return 1
	}
}

// find is the command args start with: the longest name that matches their
// first words.
func find(args []string) (name string, cmd Command, rest []string) {
	for _, c := range commands {
		words := strings.Fields(c.name)
		if len(words) <= len(args) && strings.Join(args[:len(words)], " ") == c.name && len(words) > len(strings.Fields(name)) {
			name, cmd, rest = c.name, c.new(), args[len(words):]
		}
	}
	return name, cmd, rest
}

// argParser is a Command that parses its own command line (serve:
// hostmain.Main.ParseFlags, the same parse the tests boot the host with).
type argParser interface {
	ParseArgs(ctx context.Context, env *Env, args []string) (fs *flag.FlagSet, positional []string, err error)
}

// parse parses cmd's flags from args, then from their variables in env.
func parse(ctx context.Context, name string, cmd Command, args []string, env *Env) (fs *flag.FlagSet, positional []string, err error) {
	if p, ok := cmd.(argParser); ok {
		fs, positional, err = p.ParseArgs(ctx, env, args)
		if fs == nil || errors.Is(err, flag.ErrHelp) {
			fs = flagSet(name, cmd)
		}
		return fs, positional, err
	}
	fs = flagSet(name, cmd)
	positional, err = envflag.Parse(fs, args, env.LookupEnv)
	return fs, positional, err
}

// flagSet is cmd's flags, registered on a new set that reports its errors
// (Main prints them) instead of printing them.
func flagSet(name string, cmd Command) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cmd.Flags(fs)
	return fs
}

// usageLine is `rowcall NAME [flags] ARGS`.
func usageLine(name string, cmd Command) string {
	args, _ := cmd.Usage()
	return strings.TrimSpace("rowcall " + name + " [flags] " + args)
}

// printUsage is `rowcall NAME --help`: the usage line, the summary, and
// every flag with its variable.
func printUsage(w io.Writer, name string, cmd Command, fs *flag.FlagSet) {
	_, summary := cmd.Usage()
	fmt.Fprintf(w, "usage: %s\n\n%s\n", usageLine(name, cmd), summary)
	if hasFlags(fs) {
		fmt.Fprintf(w, "\nflags (each may be set by its variable instead; a flag given wins):\n")
		envflag.PrintDefaults(w, fs)
	}
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// printHelp is `rowcall --help`: every command, its flags and their
// variables.
func printHelp(w io.Writer) {
	fmt.Fprint(w, "rowcall: a capability directory and dispatcher\n\ncommands:\n")
	for _, c := range commands {
		cmd := c.new()
		_, summary := cmd.Usage()
		fmt.Fprintf(w, "\n  %s\n      %s\n", usageLine(c.name, cmd), summary)
		flagSet(c.name, cmd).VisitAll(func(f *flag.Flag) {
			fmt.Fprintf(w, "      --%-18s $%s\n", f.Name, envflag.Var(f))
		})
	}
	fmt.Fprint(w, "\nEvery flag may be set by its variable instead (a flag given wins); yes-or-no variables take 1, true, yes or on.\n"+
		"`rowcall COMMAND --help` tells what each flag does. The owner key is read from $ROWCALL_OWNER_KEY or DATA/owner.key (created on first serve).\n")
}
