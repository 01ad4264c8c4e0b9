package main

import (
	"database/sql/driver"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/rowcall/rowcall/internal/jsontext"
)

// The JSON that statements and their rows cross between Go and the shim's d1
// helper in (d1.go). Plain Go, so it is tested natively (d1json_test.go).

// encodeParams encodes bound values as a JSON array; a []byte is
// {"$b":"<base64>"}, which the shim binds as a Uint8Array (a BLOB).
func encodeParams(args []driver.NamedValue) (string, error) {
	if len(args) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, a := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		switch v := a.Value.(type) {
		case nil:
			b.WriteString("null")
		case int64:
			b.WriteString(strconv.FormatInt(v, 10))
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return "", fmt.Errorf("d1: cannot bind %v", v)
			}
			b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
		case bool:
			b.WriteString(strconv.FormatBool(v))
		case string:
			jsontext.Write(&b, v) // what json.Marshal writes, less its HTML escapes and reflection
		case []byte:
			b.WriteString(`{"$b":"`)
			b.Write(base64.StdEncoding.AppendEncode(nil, v))
			b.WriteString(`"}`)
		default:
			return "", fmt.Errorf("d1: cannot bind a %T", v)
		}
	}
	b.WriteByte(']')
	return b.String(), nil
}

// decodeRows reads the shim's [[names…], [values…], …]: JSON.stringify's
// output for arrays of strings, numbers, nulls and {"$b":"<base64>"} (a
// BLOB). Numbers that are integers become int64 (as syumai's driver reads
// them), others float64. A small reader of exactly that shape: encoding/json
// with reflection cost more than the rest of a row read.
func decodeRows(text string) (driver.Rows, error) {
	d := rowDecoder{s: text}
	r := &d1Rows{}
	if !d.eat('[') {
		return nil, d.fail()
	}
	first := true
	for !d.eat(']') {
		if !first && !d.eat(',') {
			return nil, d.fail()
		}
		if !d.eat('[') {
			return nil, d.fail()
		}
		row := make([]any, 0, len(r.cols))
		for i := 0; !d.eat(']'); i++ {
			if i > 0 && !d.eat(',') {
				return nil, d.fail()
			}
			v, err := d.value()
			if err != nil {
				return nil, err
			}
			row = append(row, v)
		}
		if first {
			for _, c := range row {
				s, _ := c.(string)
				r.cols = append(r.cols, s)
			}
			first = false
		} else {
			r.rows = append(r.rows, row)
		}
	}
	return r, nil
}

type rowDecoder struct {
	s string
	i int
}

func (d *rowDecoder) fail() error {
	return fmt.Errorf("d1: malformed rows at byte %d of %.80q", d.i, d.s)
}

func (d *rowDecoder) eat(c byte) bool {
	if d.i < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *rowDecoder) value() (any, error) {
	if d.i >= len(d.s) {
		return nil, d.fail()
	}
	switch c := d.s[d.i]; {
	case c == '"':
		return d.str()
	case c == 'n' && strings.HasPrefix(d.s[d.i:], "null"):
		d.i += 4
		return nil, nil
	case c == '{': // {"$b":"<base64>"}
		if !strings.HasPrefix(d.s[d.i:], `{"$b":`) {
			return nil, d.fail()
		}
		d.i += len(`{"$b":`)
		s, err := d.str()
		if err != nil || !d.eat('}') {
			return nil, d.fail()
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("d1: blob: %w", err)
		}
		return b, nil
	case c == '-' || c >= '0' && c <= '9':
		j := d.i
		for j < len(d.s) && strings.IndexByte("+-.0123456789eE", d.s[j]) >= 0 {
			j++
		}
		num := d.s[d.i:j]
		d.i = j
		if n, err := strconv.ParseInt(num, 10, 64); err == nil {
			return n, nil
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return nil, fmt.Errorf("d1: number %q: %w", num, err)
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
			return int64(f), nil
		}
		return f, nil
	}
	return nil, d.fail()
}

// str reads a JSON string.
func (d *rowDecoder) str() (string, error) {
	if !d.eat('"') {
		return "", d.fail()
	}
	start, escaped := d.i, false
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case '\\':
			escaped = true
			d.i += 2
			continue
		case '"':
			raw := d.s[start:d.i]
			d.i++
			if !escaped {
				return raw, nil
			}
			if s, ok := jsontext.Unescape(raw); ok {
				return s, nil
			}
			var s string
			if err := json.Unmarshal([]byte(`"`+raw+`"`), &s); err != nil {
				return "", fmt.Errorf("d1: string: %w", err)
			}
			return s, nil
		}
		d.i++
	}
	return "", d.fail()
}

type d1Rows struct {
	cols []string
	rows [][]any
	next int
}

func (r *d1Rows) Columns() []string { return r.cols }
func (r *d1Rows) Close() error      { return nil }

func (r *d1Rows) Next(dest []driver.Value) error {
	if r.next >= len(r.rows) {
		return io.EOF
	}
	row := r.rows[r.next]
	r.next++
	for i := range dest {
		if i < len(row) {
			dest[i] = row[i]
		} else {
			dest[i] = nil
		}
	}
	return nil
}
