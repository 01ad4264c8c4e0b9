package modules_test

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/rowcall/rowcall"
	"github.com/rowcall/rowcall/runners/fn/modules"
	"github.com/rowcall/rowcall/wasm/examples"
)

// TestCodeBounds: a module one past a code bound is refused by Inspect, at
// once, with module_too_complex:<bound>, and Put stores nothing; one at the
// bound passes. The hostile sizes are the ones that took wazero's compiler 45 s
// and 1.5 GB (50M locals) or more than 120 s (1M nested blocks, a 1M-label
// br_table).
func TestCodeBounds(t *testing.T) {
	tests := []struct {
		what        string
		limit, huge int
		hugeWhy     string // the bound the huge one meets first
	}{
		{"locals", modules.MaxLocals, 50_000_000, "locals"},
		{"nesting", modules.MaxNesting, 1_000_000, "body_size"}, // 3 MB of code in one function
		{"nesting", modules.MaxNesting, 300_000, "nesting"},
		{"br_table", modules.MaxBrTable, 1_000_000, "br_table"},
		{"body_size", modules.MaxBodySize, modules.MaxSize - 100, "body_size"},
		{"functions", modules.MaxFunctions, 1_000_000, "functions"},
	}
	reg, _ := newRegistry(t)
	for _, tt := range tests {
		t.Run(tt.what, func(t *testing.T) {
			if _, err := modules.Inspect(examples.Costly(tt.what, tt.limit)); err != nil {
				t.Fatalf("at the limit (%d): %v", tt.limit, err)
			}
			for _, n := range []int{tt.limit + 1, tt.huge} {
				wasm := examples.Costly(tt.what, n)
				why := tt.what
				if n == tt.huge {
					why = tt.hugeWhy
				}
				start := time.Now()
				_, err := reg.Put(ctx, "costly", wasm)
				re := wantCode(t, err, modules.CodeTooComplex)
				if took := time.Since(start); took > 2*time.Second {
					t.Errorf("%d: refused after %v", n, took)
				}
				if !slices.Equal(re.Args, []string{why}) || re.Reason() != "module_too_complex:"+why {
					t.Errorf("%d: reason %q; want module_too_complex:%s", n, re.Reason(), why)
				}
				if re.Extra["limit"] != why || why == tt.what && re.Extra["max"] != uint64(tt.limit) {
					t.Errorf("%d: extra %v", n, re.Extra)
				}
				if _, err := reg.Get(ctx, "costly"); rowcall.ErrorCode(err) != rowcall.ENotFound {
					t.Fatalf("%d: a refused module was stored: %v", n, err)
				}
			}
		})
	}
	t.Run("total_locals", func(t *testing.T) {
		body := append(binary.AppendUvarint([]byte{1}, modules.MaxLocals), 0x7f, 0x0b)
		n := modules.MaxTotalLocals / modules.MaxLocals
		if _, err := modules.Inspect(examples.Generated(n, body)); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
		_, err := modules.Inspect(examples.Generated(n+1, body))
		if re := wantCode(t, err, modules.CodeTooComplex); re.Reason() != "module_too_complex:total_locals" {
			t.Fatalf("reason %q", re.Reason())
		}
	})
}

// TestExamplesWithinCodeBounds: every committed example passes Inspect (the Go
// ones are checked by the fn runner's tests, which register them).
func TestExamplesWithinCodeBounds(t *testing.T) {
	for _, e := range examples.Builtin() {
		if _, err := modules.Inspect(e.Wasm); err != nil {
			t.Errorf("%s: %v", e.Name, err)
		}
	}
}

// TestInspectRefusesMalformedCode: a code section that is cut short or does
// not decode is refused with a code, never a panic or a compile.
func TestInspectRefusesMalformedCode(t *testing.T) {
	nest := examples.Costly("nesting", 3)
	longBody := bytes.Clone(nest)
	longBody[len(longBody)-12] = 0x7f // the body's size byte
	brt := examples.Costly("br_table", 3)
	module := func(body []byte) []byte { return examples.Generated(1, body) }
	tests := []struct {
		name string
		b    []byte
		code rowcall.Code
	}{
		{"cut in a body", nest[:len(nest)-2], modules.CodeNotWasm},
		{"cut in a br_table", brt[:len(brt)-4], modules.CodeNotWasm},
		{"body past the section", longBody, modules.CodeNotWasm},
		{"local count too long", module([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x0b}), modules.CodeInvalid},
		{"local groups with no bytes", module([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}), modules.CodeInvalid},
		{"unknown instruction", module([]byte{0, 0xf0, 0x0b}), modules.CodeInvalid},
		{"br_table count past the body", module([]byte{0, 0x41, 0, 0x0e, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x0b}), modules.CodeInvalid},
		{"function count past the section", module(nil)[:len(module(nil))-1], modules.CodeNotWasm},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := modules.Inspect(tt.b)
			wantCode(t, err, tt.code)
		})
	}
}

// BenchmarkInspectCode: Inspect's pass over 8 MiB of code (130 functions of
// 60 KB of local.get, i32.load and drop).
func BenchmarkInspectCode(b *testing.B) {
	body := []byte{0}
	for len(body) < 60_000 {
		body = append(body, 0x20, 0x85, 0x03, 0x28, 0x02, 0x90, 0x8c, 0x01, 0x1a) // local.get 389; i32.load offset=18000; drop
	}
	wasm := examples.Generated(130, append(body, 0x0b))
	b.SetBytes(int64(len(wasm)))
	for b.Loop() {
		if _, err := modules.Inspect(wasm); err != nil {
			b.Fatal(err)
		}
	}
}
