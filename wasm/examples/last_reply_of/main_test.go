package main

import "testing"

func TestLastReply(t *testing.T) {
	tests := []struct {
		name, text, want string
		ok               bool
	}{
		{"one block", "hello [REPLY]Hi there![/REPLY]", "Hi there!", true},
		{"last of several", "[REPLY]draft[/REPLY] no, [REPLY] final [/REPLY] tail", "final", true},
		{"unclosed last block ignored", "[REPLY]a[/REPLY] [REPLY]b", "a", true},
		{"pipes kept", "[REPLY]a|b|c[/REPLY]", "a|b|c", true},
		{"empty block", "[REPLY][/REPLY]", "", true},
		{"none", "no reply here", "", false},
		{"close only", "x[/REPLY]", "", false},
		{"empty text", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := lastReply(tt.text)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("lastReply(%q) = %q, %v; want %q, %v", tt.text, got, ok, tt.want, tt.ok)
			}
		})
	}
}
