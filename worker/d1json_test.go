package main

import (
	"database/sql/driver"
	"encoding/json"
	"io"
	"reflect"
	"testing"
)

// The rows the shim's d1 helper answers (JSON.stringify of raw({columnNames:
// true}) with BLOBs as {"$b": base64}) read back as syumai's driver read them.
func TestDecodeRows(t *testing.T) {
	text := `[["key","n","f","blob","none","s"],` +
		`["A",1,1.5,{"$b":"AAEC/w=="},null,"plain"],` +
		`["B\"q",-9007199254740991,1e+21,{"$b":""},null,"tab\there \\ \u0001 é ☃ 😀"],` +
		`["C",0,-0.25,null,null,""]]`
	rows, err := decodeRows(text)
	if err != nil {
		t.Fatal(err)
	}
	if got := rows.Columns(); !reflect.DeepEqual(got, []string{"key", "n", "f", "blob", "none", "s"}) {
		t.Fatalf("columns %q", got)
	}
	want := [][]driver.Value{
		{"A", int64(1), 1.5, []byte{0, 1, 2, 255}, nil, "plain"},
		{`B"q`, int64(-9007199254740991), 1e21, []byte{}, nil, "tab\there \\ \x01 é ☃ 😀"},
		{"C", int64(0), -0.25, nil, nil, ""},
	}
	for i, w := range want {
		dest := make([]driver.Value, 6)
		if err := rows.Next(dest); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		if !reflect.DeepEqual(dest, w) {
			t.Fatalf("row %d = %#v, want %#v", i, dest, w)
		}
	}
	if err := rows.Next(make([]driver.Value, 6)); err != io.EOF {
		t.Fatalf("after the last row: %v", err)
	}

	empty, err := decodeRows(`[]`)
	if err != nil || empty.Columns() != nil || empty.Next(nil) != io.EOF {
		t.Fatalf("no rows: %v %v", empty, err)
	}
	for _, bad := range []string{``, `[`, `[["a"]`, `[["a"],[tru]]`, `[["a"],[{"x":1}]]`, `[["a"],["unterminated]]`, `[["a"],[{"$b":"!!"}]]`} {
		if _, err := decodeRows(bad); err == nil {
			t.Errorf("decodeRows(%q) accepted it", bad)
		}
	}
}

// Every escape JSON.stringify writes reads back as encoding/json reads it,
// lone surrogates included.
func TestDecodeRowsEscapes(t *testing.T) {
	for _, esc := range []string{`a\nb\tc`, `\"\\\/\b\f\n\r\t`, `\u0000\u001f\u00e9\u2028`, `\ud83d\ude00 x`,
		`\ud800`, `\udc00`, `\ud800\u0041`, `\ud800x`, `é\n☃`, `\u00`, `\x`, `\uzzzz`} {
		var want string
		wantErr := json.Unmarshal([]byte(`"`+esc+`"`), &want)
		rows, err := decodeRows(`[["s"],["` + esc + `"]]`)
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, encoding/json's %v", esc, err, wantErr)
			continue
		}
		if err != nil {
			continue
		}
		dest := make([]driver.Value, 1)
		if err := rows.Next(dest); err != nil || dest[0] != want {
			t.Errorf("%s reads as %q (%v), encoding/json's %q", esc, dest[0], err, want)
		}
	}
}

func TestEncodeParams(t *testing.T) {
	got, err := encodeParams([]driver.NamedValue{{Value: nil}, {Value: int64(-3)}, {Value: 2.5}, {Value: true},
		{Value: "a\"b\n☃"}, {Value: []byte{0, 255}}})
	if err != nil {
		t.Fatal(err)
	}
	var back []any
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	want := []any{nil, -3.0, 2.5, true, "a\"b\n☃", map[string]any{"$b": "AP8="}}
	if !reflect.DeepEqual(back, want) {
		t.Fatalf("%s decodes to %#v", got, back)
	}
	// Strings JavaScript reads as json.Marshal's: HTML characters, U+2028, an invalid byte.
	for _, v := range []string{"<a href='x'>&amp;</a>", "line\u2028sep", "bad \xff byte", "\x00\x1f\x7f"} {
		got, err := encodeParams([]driver.NamedValue{{Value: v}})
		if err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal([]string{v})
		var a, b []string
		if json.Unmarshal([]byte(got), &a) != nil || json.Unmarshal(j, &b) != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("%q encodes as %s, json.Marshal as %s", v, got, j)
		}
	}
	if s, err := encodeParams(nil); s != "" || err != nil {
		t.Fatalf("no params: %q %v", s, err)
	}
	if _, err := encodeParams([]driver.NamedValue{{Value: struct{}{}}}); err == nil {
		t.Fatal("a struct was accepted")
	}
}
