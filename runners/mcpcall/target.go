package mcpcall

import (
	"errors"
	"net/url"
	"strings"
)

// Target is a parsed MCP row target.
type Target struct {
	URL   *url.URL // a streamable HTTP server, or nil
	Stdio string   // the name of an operator-declared stdio server, or ""
	Tool  string
}

// Server is the target's server as written: its URL, or stdio:NAME.
func (t Target) Server() string {
	if t.URL != nil {
		return t.URL.String()
	}
	return "stdio:" + t.Stdio
}

// ParseTarget reads "MCP <server>#<tool>" (the package doc).
func ParseTarget(target string) (Target, error) {
	const form = `an MCP row's target is "MCP https://host/path#tool" or "MCP stdio:NAME#tool"`
	f := strings.Fields(target)
	if len(f) != 2 || !strings.EqualFold(f[0], "MCP") {
		return Target{}, errors.New("target " + quote(target) + " is not of the form: " + form)
	}
	server, tool, ok := cut(f[1])
	if !ok || tool == "" {
		return Target{}, errors.New("target " + quote(target) + " names no tool after '#': " + form)
	}
	t := Target{Tool: tool}
	if name, ok := strings.CutPrefix(server, "stdio:"); ok {
		if !validName(name) {
			return Target{}, errors.New("stdio server name " + quote(name) + " is not a name (letters, digits, '_', '-', '.')")
		}
		t.Stdio = name
		return t, nil
	}
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return Target{}, errors.New("server " + quote(server) + " is not an absolute http or https URL without user info: " + form)
	}
	t.URL = u
	return t, nil
}

// cut splits at the last '#'.
func cut(s string) (server, tool string, ok bool) {
	i := strings.LastIndexByte(s, '#')
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+1:], true
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func quote(s string) string { return `"` + s + `"` }
