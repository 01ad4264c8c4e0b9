package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// CompletionCommand is `rowcall completion bash`: a bash completion script
// for every command, its sub-commands, its flags and its words, made from
// the commands table.
//
//	source <(rowcall completion bash)     # or save it under /etc/bash_completion.d/rowcall
type CompletionCommand struct{}

func (c *CompletionCommand) Usage() (string, string) {
	return "bash", "print a shell completion script: source <(rowcall completion bash)"
}

func (c *CompletionCommand) Flags(fs *flag.FlagSet) {}

// Words are the positional words the command takes.
func (c *CompletionCommand) Words() []string { return []string{"bash"} }

func (c *CompletionCommand) Run(ctx context.Context, env *Env, args []string) error {
	if len(args) != 1 || args[0] != "bash" {
		return fmt.Errorf("usage: rowcall completion bash   (bash is the shell completion is written for)")
	}
	return writeBash(env.Stdout)
}

// worder is a command with a fixed set of positional words (migrate list).
type worder interface{ Words() []string }

// writeBash writes the script: after `rowcall` the first words of the
// commands; after a command's name its flags (when the word starts with -),
// its sub-commands and words; else the shell's own (file names).
func writeBash(w io.Writer) error {
	var top []string
	first := map[string][]string{} // a command's first word → its second words and words
	flags := map[string][]string{} // a command's whole name → its flags
	for _, c := range commands {
		cmd := c.new()
		words := strings.Fields(c.name)
		if !slices.Contains(top, words[0]) {
			top = append(top, words[0])
		}
		if len(words) == 2 {
			first[words[0]] = append(first[words[0]], words[1])
		} else if wd, ok := cmd.(worder); ok {
			first[c.name] = append(first[c.name], wd.Words()...)
		}
		flagSet(c.name, cmd).VisitAll(func(f *flag.Flag) { flags[c.name] = append(flags[c.name], "--"+f.Name) })
	}
	var b strings.Builder
	b.WriteString("# bash completion for rowcall: source <(rowcall completion bash)\n_rowcall() {\n")
	b.WriteString("    local cur=\"${COMP_WORDS[COMP_CWORD]}\" cmd=\"${COMP_WORDS[1]}\" words=\n")
	fmt.Fprintf(&b, "    if [[ $COMP_CWORD -eq 1 ]]; then\n        words=%q\n", strings.Join(append(top, "--help"), " "))
	b.WriteString("    elif [[ $cur == -* ]]; then\n        case \"$cmd ${COMP_WORDS[2]}\" in\n")
	for _, c := range commands {
		if len(strings.Fields(c.name)) == 2 {
			fmt.Fprintf(&b, "        %q) words=%q ;;\n", c.name, strings.Join(append(flags[c.name], "--help"), " "))
		}
	}
	b.WriteString("        *) case \"$cmd\" in\n")
	for _, c := range commands {
		if len(strings.Fields(c.name)) == 1 {
			fmt.Fprintf(&b, "            %q) words=%q ;;\n", c.name, strings.Join(append(flags[c.name], "--help"), " "))
		}
	}
	b.WriteString("            esac ;;\n        esac\n    elif [[ $COMP_CWORD -eq 2 ]]; then\n        case \"$cmd\" in\n")
	for _, name := range top {
		if ws := first[name]; len(ws) > 0 {
			fmt.Fprintf(&b, "        %q) words=%q ;;\n", name, strings.Join(ws, " "))
		}
	}
	b.WriteString("        esac\n    fi\n    COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n}\ncomplete -o default -F _rowcall rowcall\n")
	_, err := io.WriteString(w, b.String())
	return err
}
