package flow

import (
	"context"
	"testing"

	"github.com/rowcall/rowcall"
)

// echo is a trivial Caller: it answers the body.
type echo struct{}

func (echo) Call(_ context.Context, _ *rowcall.Invocation, _, body string) rowcall.Output {
	return rowcall.Output{Result: body, Material: true}
}

func BenchmarkFlow3Steps(b *testing.B) {
	inv := invocation("# three steps\nA: $1 => R\n> B: $2|$PREV\n> C: $R/$PREV", "hello|+15550001111", echo{})
	b.ReportAllocs()
	for b.Loop() {
		if out := (Runner{}).Run(context.Background(), inv); out.Failed() {
			b.Fatal(out.Result)
		}
	}
}

func BenchmarkFlowFanOut(b *testing.B) {
	inv := invocation("A: $1 > { B: $PREV | C: $PREV | D: $PREV } > E: $PREV.B", "hello", echo{})
	b.ReportAllocs()
	for b.Loop() {
		if out := (Runner{}).Run(context.Background(), inv); out.Failed() {
			b.Fatal(out.Result)
		}
	}
}
