// Command last_reply_of is the seed's LAST_REPLY_OF as a WASI preview 1 command
// (see wasm/ABI.md), written in Go and built with GOOS=wasip1 GOARCH=wasm.
//
// It prints the text of the last complete [REPLY]…[/REPLY] block in its first
// argument, trimmed of surrounding blanks:
//
//	[LAST_REPLY_OF]Thinking… [REPLY]draft[/REPLY] no, [REPLY]Hi there![/REPLY][/LAST_REPLY_OF]  →  Hi there!
//
// With no such block it exits with code 1 and says why on stderr, which the fn
// runner reports as ERR:fn:exit:1:<that message>, so a flow stops there.
//
// The text usually comes from a model and may contain '|', so the row's content
// should be ["$1+"] (every argument joined back), not the default ["$1"].
package main

import (
	"fmt"
	"os"
	"strings"
)

func main() {
	text := ""
	if len(os.Args) > 1 {
		text = os.Args[1]
	}
	reply, ok := lastReply(text)
	if !ok {
		fmt.Fprintf(os.Stderr, "last_reply_of: no [REPLY]…[/REPLY] block in the %d-byte text; the model's output must end with [REPLY]your text[/REPLY]\n", len(text))
		os.Exit(1)
	}
	os.Stdout.WriteString(reply)
}

// lastReply returns the trimmed text of the last complete [REPLY]…[/REPLY] block.
func lastReply(text string) (string, bool) {
	const open, end = "[REPLY]", "[/REPLY]"
	j := strings.LastIndex(text, end)
	if j < 0 {
		return "", false
	}
	i := strings.LastIndex(text[:j], open)
	if i < 0 {
		return "", false
	}
	return strings.TrimSpace(text[i+len(open) : j]), true
}
