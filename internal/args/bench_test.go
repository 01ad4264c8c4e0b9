package args

import "testing"

func BenchmarkRender(b *testing.B) {
	benches := []struct {
		name string
		tmpl string
		mode Mode
		v    Values
	}{
		{"url", "https://api.open-meteo.com/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m", URL, Values{Args: Split("37.77|-122.42")}},
		{"json", `{"model":"grok-4","messages":[{"role":"user","content":"$1"}],"n":$2,"meta":$3+}`, JSON, Values{Args: Split(`say "hi" to Bo|2|{"a":"x|y"}`)}},
		{"body", "$2+", Body, Values{Args: Split(`ROUTER|{"content":"a|b"}`)}},
		{"flow_step", "blooio|$2|$PREV", Raw, Values{Args: Split("text|+15551234567"), Vars: map[string]string{"PREV": "hello there"}}},
		{"no_ref", `{"static":true}`, JSON, Values{}},
		{"join", "https://petstore3.swagger.io/api/v3/pet/findByStatus?status=$1[&status=]", URL, Values{Args: Split(`["available","sold"]`)}},
	}
	for _, bb := range benches {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Render(bb.tmpl, bb.mode, bb.v)
			}
		})
	}
}

// BenchmarkCheck is what an http call adds before rendering: Check of its
// target, without a join reference (the common case) and with one.
func BenchmarkCheck(b *testing.B) {
	for _, bb := range []struct{ name, tmpl, body string }{
		{"no_join", "https://api.open-meteo.com/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m", "37.77|-122.42"},
		{"join", "https://petstore3.swagger.io/api/v3/pet/findByStatus?status=$1[&status=]", `["available","sold"]`},
	} {
		v := Values{Args: Split(bb.body)}
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Check(bb.tmpl, v)
			}
		})
	}
}
