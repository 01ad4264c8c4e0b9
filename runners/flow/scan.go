package flow

import "strings"

// scanner follows nesting through text a byte at a time, so that separators
// inside brackets or double-quoted strings are not taken as separators.
type scanner struct {
	depth int  // open '{' and '[' not yet closed
	str   bool // inside a "…" string, which ends at its closing quote or at a newline
	esc   bool // inside a string, right after a backslash
}

// next takes c and reports whether c stands at the top level: outside any
// brackets and strings.
func (sc *scanner) next(c byte) (top bool) {
	if sc.str {
		switch {
		case c == '\n':
			sc.str, sc.esc = false, false
		case sc.esc:
			sc.esc = false
		case c == '\\':
			sc.esc = true
		case c == '"':
			sc.str = false
		}
		return false
	}
	top = sc.depth == 0
	switch c {
	case '"':
		sc.str = true
	case '{', '[':
		sc.depth++
	case '}', ']':
		if sc.depth > 0 {
			sc.depth--
		}
	}
	return top
}

// split cuts s at every top-level byte for which isSep(s, i) is true.
func split(s string, isSep func(s string, i int) bool) []string {
	var parts []string
	var sc scanner
	start := 0
	for i := 0; i < len(s); i++ {
		if sc.next(s[i]) && isSep(s, i) {
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// isStepSep reports whether s[i] is a step separator: a '>' that is the first
// non-blank byte of its line, or has whitespace on both sides ("=>", "->",
// "a>b" and ">=" are not separators).
func isStepSep(s string, i int) bool {
	if s[i] != '>' {
		return false
	}
	line := s[:i]
	if j := strings.LastIndexByte(line, '\n'); j >= 0 {
		line = line[j+1:]
	}
	if strings.Trim(line, " \t\r") == "" {
		return true
	}
	return isSpace(s[i-1]) && (i+1 == len(s) || isSpace(s[i+1]))
}

// isBranchSep reports whether s[i] separates two branches of a block: a '|'
// followed by optional whitespace, a row key, ':' and then whitespace or the
// end of the block. Any other '|' belongs to the branch's arguments.
func isBranchSep(s string, i int) bool {
	if s[i] != '|' {
		return false
	}
	t := strings.TrimLeft(s[i+1:], " \t\r\n")
	j := 0
	for j < len(t) && isKeyChar(t[j]) {
		j++
	}
	if j == 0 || t[0] == '_' || t[0] == '-' || t[0] == '.' || j == len(t) || t[j] != ':' {
		return false
	}
	return j+1 == len(t) || isSpace(t[j+1])
}

// closing returns the index of the bracket that closes s[0], or -1.
func closing(s string) int {
	var sc scanner
	for i := 0; i < len(s); i++ {
		sc.next(s[i])
		if sc.depth == 0 && !sc.str {
			return i
		}
	}
	return -1
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isKeyChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}
