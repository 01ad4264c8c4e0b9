package jsontext

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", `"plain"`},
		{`q"b\`, `"q\"b\\"`},
		{"\b\t\n\f\r\x01\x1f", `"\b\t\n\f\r\u0001\u001f"`},
		{"<a> & b \u2028 ü ✓", "\"<a> & b \u2028 ü ✓\""},
		{"bad\xffbyte", `"bad\ufffdbyte"`},
	} {
		var b strings.Builder
		Write(&b, c.in)
		if b.String() != c.want {
			t.Errorf("%q: %s, want %s", c.in, b.String(), c.want)
		}
		var back string
		if err := json.Unmarshal([]byte(b.String()), &back); err != nil || back != strings.ToValidUTF8(c.in, "\uFFFD") {
			t.Errorf("%q does not read back: %q %v", c.in, back, err)
		}
	}
}
