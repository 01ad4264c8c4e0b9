package args

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		body string
		want []string
	}{
		{"", []string{""}},
		{"a", []string{"a"}},
		{"37.77|-122.42", []string{"37.77", "-122.42"}},
		{"a||b|", []string{"a", "", "b", ""}},
		{`ROUTER|{"content":"a|b"}`, []string{"ROUTER", `{"content":"a`, `b"}`}},
	}
	for _, tt := range tests {
		if got := Split(tt.body); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Split(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

// vals builds Values from a body and name=value pairs.
func vals(body string, vars ...string) Values {
	v := Values{Args: Split(body), Vars: map[string]string{}}
	for i := 0; i+1 < len(vars); i += 2 {
		v.Vars[vars[i]] = vars[i+1]
	}
	return v
}

const prev = `{"current":{"temperature_2m":15.7,"time":"04:30"},"items":[{"id":"a"},{"id":"b"}],"ok":true,"none":null}`

func TestRender(t *testing.T) {
	const meteo = "https://api.open-meteo.com/v1/forecast?latitude=$1&longitude=$2&current=temperature_2m"
	tests := []struct {
		name string
		tmpl string
		mode Mode
		v    Values
		want string
	}{
		// References.
		{"no dollar", "plain text", JSON, vals("x"), "plain text"},
		{"piece", "$1-$2", Raw, vals("a|b"), "a-b"},
		{"greedy digits", "$12", Raw, vals("1|2|3|4|5|6|7|8|9|10|11|twelve"), "twelve"},
		{"greedy digits missing", "$12", Raw, vals("a"), ""},
		{"missing piece empty", "[$1][$2]", Raw, vals("a"), "[a][]"},
		{"extra pieces dropped", "$1", Raw, vals("a|b|c"), "a"},
		{"rest", "$2+", Raw, vals("a|b|c"), "b|c"},
		{"rest last", "$3+", Raw, vals("a|b|c"), "c"},
		{"rest past end", "$4+", Raw, vals("a|b|c"), ""},
		{"rest from one", "$1+", Raw, vals("a|b"), "a|b"},
		{"zero literal", "$0 and $00", Raw, vals("a"), "$0 and $00"},
		{"lone dollar", "costs $ 5$", Raw, vals("a"), "costs $ 5$"},
		{"dollar punct", "$-1 $.x $+", Raw, vals("a"), "$-1 $.x $+"},
		{"huge number", "$99999999999999999999999", Raw, vals("a"), ""},
		{"name", "got $PREV", Raw, vals("", "PREV", "ok"), "got ok"},
		{"binding", "$REPLY to $2", Raw, vals("a|b", "REPLY", "hi"), "hi to b"},
		{"unresolved name literal", "keep $TODO here", Raw, vals(""), "keep $TODO here"},
		{"unresolved PREV literal", "$PREV", Raw, Values{}, "$PREV"},
		{"unresolved raw literal", "keep $$TODO", JSON, vals(""), "keep $$TODO"},
		{"unresolved path literal", "$NOPE.a.b!", Raw, vals(""), "$NOPE.a.b!"},
		{"name then digits", "$A1$1", Raw, vals("x", "A1", "y"), "yx"},
		{"piece dot", "$1.5", Raw, vals("2"), "2.5"},

		// Paths.
		{"path number", "$PREV.current.temperature_2m", Raw, vals("", "PREV", prev), "15.7"},
		{"path string unquoted", "at $PREV.current.time", Raw, vals("", "PREV", prev), "at 04:30"},
		{"path index", "$PREV.items.1.id", Raw, vals("", "PREV", prev), "b"},
		{"path count", "$PREV.items.#", Raw, vals("", "PREV", prev), "2"},
		{"path all", "$PREV.items.#.id", Raw, vals("", "PREV", prev), `["a","b"]`},
		{"path object raw", "$PREV.items.0", Raw, vals("", "PREV", prev), `{"id":"a"}`},
		{"path bool", "$PREV.ok", Raw, vals("", "PREV", prev), "true"},
		{"path null", "$PREV.none", Raw, vals("", "PREV", prev), "null"},
		{"path missing empty", "[$PREV.nope]", Raw, vals("", "PREV", prev), "[]"},
		{"path not json empty", "[$PREV.a]", Raw, vals("", "PREV", "plain text"), "[]"},
		{"trailing full stop", "see $PREV.", Raw, vals("", "PREV", "x"), "see x."},
		{"full stop then space", "see $PREV. Next", Raw, vals("", "PREV", "x"), "see x. Next"},
		{"path then full stop", "t=$PREV.ok.", Raw, vals("", "PREV", prev), "t=true."},
		{"path into http body", "$PREV.current.temperature_2m", Raw, vals("", "PREV", "HTTP 200:"+prev), "15.7"},
		{"path into http 304 body", "$PREV.items.0.id", Raw, vals("", "PREV", "HTTP 304:"+prev), "a"},
		{"http result whole", "$PREV", Raw, vals("", "PREV", "HTTP 200:"+prev), "HTTP 200:" + prev},
		{"path http body not json", "[$PREV.a]", Raw, vals("", "PREV", "HTTP 200:plain"), "[]"},
		{"path not an http status", "[$PREV.a]", Raw, vals("", "PREV", `HTTP 20:{"a":1}`), "[]"},
		{"path error result", "[$PREV.a]", Raw, vals("", "PREV", `ERR:http:500:{"a":1}`), "[]"},
		{"binding path", "$W.current.temperature_2m", Raw, vals("", "W", prev), "15.7"},
		{"path json escaped", `{"t":"$PREV.current.time"}`, JSON, vals("", "PREV", `{"current":{"time":"a\"b"}}`), `{"t":"a\"b"}`},

		// $SELF: the host's base URL, never escaped.
		{"self in url", "$SELF/api/directory/$1", URL, vals("a/b", "SELF", "http://127.0.0.1:9/x"), "http://127.0.0.1:9/x/api/directory/a%2Fb"},
		{"self after query", "https://h/?next=$SELF/r", URL, vals("", "SELF", "http://h:1"), "https://h/?next=http://h:1/r"},
		{"self in json", `{"u":"$SELF"}`, JSON, vals("", "SELF", "https://r.example"), `{"u":"https://r.example"}`},
		{"self unset stays", "$SELF/api", URL, vals(""), "$SELF/api"},
		{"self path is a field", "[$SELF.a]", Raw, vals("", "SELF", `{"a":"b"}`), "[b]"},

		// URL.
		{"dir patch url", "https://example.test/api/directory/$1", URL, vals(`ROUTER|{"content":"a|b"}`), "https://example.test/api/directory/ROUTER"},
		{"open-meteo", meteo, URL, vals("37.77|-122.42"), "https://api.open-meteo.com/v1/forecast?latitude=37.77&longitude=-122.42&current=temperature_2m"},
		{"open-meteo missing", meteo, URL, vals("37.77"), "https://api.open-meteo.com/v1/forecast?latitude=37.77&longitude=&current=temperature_2m"},
		{"url path escape", "https://h.test/u/$1/x", URL, vals("a/b c?d#e"), "https://h.test/u/a%2Fb%20c%3Fd%23e/x"},
		{"url query escape", "https://h.test/s?q=$1&n=2", URL, vals("a&b=c #d+e"), "https://h.test/s?q=a%26b%3Dc+%23d%2Be&n=2"},
		{"url path then query", "https://h.test/$1?q=$2", URL, vals("a b|c d"), "https://h.test/a%20b?q=c+d"},
		{"url raw", "$$1/v1?q=$2", URL, vals("https://h.test|a b"), "https://h.test/v1?q=a+b"},
		{"url raw question mark", "$$1&q=$2", URL, vals("https://h.test/?x=1|a/b"), "https://h.test/?x=1&q=a%2Fb"},
		{"url rest", "https://h.test/x?q=$1+", URL, vals("a|b"), "https://h.test/x?q=a%7Cb"},
		// In the authority an '@' is escaped: a value cannot make the host a user name.
		{"url port", "https://h.test:$1/x", URL, vals("443"), "https://h.test:443/x"},
		{"url port at", "https://h.test:$1/x", URL, vals("80@evil.test"), "https://h.test:80%40evil.test/x"},
		{"url after host at", "https://h.test$1", URL, vals("@evil.test/p"), "https://h.test%40evil.test%2Fp"},
		{"url host and port", "http://$1/x/$2", URL, vals("10.0.0.1:8080|a@b"), "http://10.0.0.1:8080/x/a@b"},
		{"url password", "https://u:$1@h.test/", URL, vals("p@evil.test:1/"), "https://u:p%40evil.test:1%2F@h.test/"},
		{"url scheme in path", "https://h.test/go/https://$1", URL, vals("a@b"), "https://h.test/go/https://a@b"},
		{"url raw host", "$$1/x/$2", URL, vals("https://h.test|a@b"), "https://h.test/x/a@b"},

		// JSON.
		{"json string", `["$1","$2"]`, JSON, vals(`say "hi"|x`), `["say \"hi\"","x"]`},
		{"json string controls", `{"m":"$1"}`, JSON, vals("a\nb\tc\\d\x01"), `{"m":"a\nb\tc\\d\u0001"}`},
		{"json bad utf8", `{"m":"$1"}`, JSON, vals("a\xffb"), `{"m":"a\ufffdb"}`},
		{"json unicode kept", `{"m":"$1"}`, JSON, vals("héllo ☃"), `{"m":"héllo ☃"}`},
		{"json number", `{"n": $1}`, JSON, vals("5"), `{"n": 5}`},
		{"json injection quoted", `{"n": $1}`, JSON, vals(`5, "x": 1`), `{"n": "5, \"x\": 1"}`},
		{"json true", `{"b":$1}`, JSON, vals("true"), `{"b":true}`},
		{"json object", `{"o":$2+}`, JSON, vals(`k|{"a":"x|y"}`), `{"o":{"a":"x|y"}}`},
		{"json missing outside", `{"n": $2}`, JSON, vals("a"), `{"n": ""}`},
		{"json word outside", `[$1]`, JSON, vals("hello"), `["hello"]`},
		{"json escaped quote in template", `{"a":"x\"$1","b":$2}`, JSON, vals(`"|7`), `{"a":"x\"\"","b":7}`},
		{"json escaped backslash in template", `{"a":"x\\","b":$1}`, JSON, vals("no"), `{"a":"x\\","b":"no"}`},
		{"json dangling backslash", `{"a":"x\$1"}`, JSON, vals(`"}`), `{"a":"x\\\"}"}`},
		{"json raw", `{"o":$$1,"s":"$2"}`, JSON, vals(`{"a":1}|q"`), `{"o":{"a":1},"s":"q\""}`},
		{"json raw opens string", `[$$1$2"]`, JSON, vals(`"a|b"`), `["ab\""]`},
		{"json name", `{"p":"$PREV"}`, JSON, vals("", "PREV", `a "b"`), `{"p":"a \"b\""}`},

		// Raw.
		{"raw unchanged", "blooio|$2|$PREV", Raw, vals("x|+1555", "PREV", `a "b" & c`), `blooio|+1555|a "b" & c`},

		// Body.
		{"body dir patch", "$2+", Body, vals(`ROUTER|{"content":"a|b"}`), `{"content":"a|b"}`},
		{"body single ref trimmed", "  $1 \n", Body, vals(`a "b"`), `a "b"`},
		{"body single name", "$PREV", Body, vals("", "PREV", "x&y"), "x&y"},
		{"body single path", "$PREV.items.0", Body, vals("", "PREV", prev), `{"id":"a"}`},
		{"body single raw", "$$1", Body, vals(`<&>`), `<&>`},
		{"body single unresolved", "$NOPE", Body, vals(""), "$NOPE"},
		{"body json", `{"q": "$1", "n": $2}`, Body, vals(`a"b|3`), `{"q": "a\"b", "n": 3}`},
		{"body json array", ` ["$1"]`, Body, vals(`"`), ` ["\""]`},
		{"body form", "a=$1&b=$2", Body, vals("x&y=z|1 2"), "a=x%26y%3Dz&b=1+2"},
		{"body form one field", "q=$1", Body, vals("a b"), "q=a+b"},
		{"body text", "Hello $1, your code is $2", Body, vals(`Bo & "Al"|a=b&c`), `Hello Bo & "Al", your code is a=b&c`},
		{"body text with equals", "x = $1 & y", Body, vals("a&b"), "x = a&b & y"},
		{"body no dollar", "  as is  ", Body, vals("a"), "  as is  "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Render(tt.tmpl, tt.mode, tt.v); got != tt.want {
				t.Errorf("Render(%q, %d)\n got %s\nwant %s", tt.tmpl, tt.mode, got, tt.want)
			}
		})
	}
}

// The seed's DIR_PATCH row: target "PATCH url/$1", body template "$2+".
func TestRenderDirPatch(t *testing.T) {
	target := "PATCH https://example.test/api/directory/$1"
	method, rawURL, _ := strings.Cut(target, " ")
	v := Values{Args: Split(`ROUTER|{"content":"a|b"}`)}
	if got, want := method+" "+Render(rawURL, URL, v), "PATCH https://example.test/api/directory/ROUTER"; got != want {
		t.Errorf("target = %s, want %s", got, want)
	}
	if got, want := Render("$2+", Body, v), `{"content":"a|b"}`; got != want {
		t.Errorf("body = %s, want %s", got, want)
	}
}

func TestRenderNoDollarNoAlloc(t *testing.T) {
	v := vals("a|b")
	for _, mode := range []Mode{Raw, URL, JSON, Body} {
		n := testing.AllocsPerRun(100, func() { Render(`{"a": "no references here"}`, mode, v) })
		if n != 0 {
			t.Errorf("mode %d: %v allocs, want 0", mode, n)
		}
	}
}

// A join reference $N[sep]: a JSON array's items, each escaped for where it
// lands, joined by the separator as written; any other argument one value.
func TestRenderJoin(t *testing.T) {
	const (
		explode = "https://h.test/pet/findByStatus?status=$1[&status=]"
		comma   = "https://h.test/pet/findByStatus?status=$1[,]"
	)
	tests := []struct {
		name string
		tmpl string
		mode Mode
		body string
		want string
	}{
		{"explode", explode, URL, `["available","sold"]`, "https://h.test/pet/findByStatus?status=available&status=sold"},
		{"explode false", comma, URL, `["available","sold"]`, "https://h.test/pet/findByStatus?status=available,sold"},
		{"pipe delimited", "https://h.test/p?s=$1[%7C]", URL, `["a","b"]`, "https://h.test/p?s=a%7Cb"},
		{"space delimited", "https://h.test/p?s=$1[%20]", URL, `["a","b"]`, "https://h.test/p?s=a%20b"},
		{"items query-escaped", explode, URL, `["a&b=c"," d,e"]`, "https://h.test/pet/findByStatus?status=a%26b%3Dc&status=+d%2Ce"},
		{"path", "https://h.test/pets/$1[,]/x?q=$2", URL, `["a/b","c d"]|z`, "https://h.test/pets/a%2Fb,c%20d/x?q=z"},
		{"numbers and booleans", "https://h.test/p?id=$1[&id=]", URL, `[1, 2.50, true]`, "https://h.test/p?id=1&id=2.50&id=true"},
		{"one item", explode, URL, `["sold"]`, "https://h.test/pet/findByStatus?status=sold"},
		{"empty array", explode, URL, `[]`, "https://h.test/pet/findByStatus?status="},
		{"scalar", explode, URL, `sold`, "https://h.test/pet/findByStatus?status=sold"},
		{"scalar with comma", comma, URL, `a,b c`, "https://h.test/pet/findByStatus?status=a%2Cb+c"},
		{"missing", explode + "&x=$2", URL, ``, "https://h.test/pet/findByStatus?status=&x="},
		{"quoted string is one value", "$1[,]", Raw, `"sold"`, `"sold"`},
		{"raw", "$1[ - ]x$1[;]", Raw, `["a","b"]`, `["a","b"][ - ]xa;b`},
		{"raw reference", "https://h.test/p?s=$$1[+]", URL, `["a b","c"]`, "https://h.test/p?s=a b+c"},
		{"json outside a string", `{"ids":[$1[,]]}`, JSON, `["a",2,"q\"t"]`, `{"ids":["a",2,"q\"t"]}`},
		{"json inside a string, blank", `{"s":"$1[, ]"}`, JSON, `["a","b\"c"]`, `{"s":"[\"a\",\"b\\\"c\"][, ]"}`},
		{"json inside a string, no blank", `{"s":"$1[;]"}`, JSON, `["a","b\"c"]`, `{"s":"a;b\"c"}`},
		{"form body", "status=$1[&status=]&n=$2", Body, `["a b","c"]|5`, "status=a+b&status=c&n=5"},
		{"body single join", "$1[,]", Body, `["a","b"]`, "a,b"},
		{"not a separator: empty", "$1[]", Raw, `["a"]`, `["a"][]`},
		{"not a separator: blank", "$1[a b]", Raw, `x`, `x[a b]`},
		{"not a separator: unclosed", "$1[,", Raw, `x`, `x[,`},
		{"not a separator: rest", "$1+[,]", Raw, `a|b`, `a|b[,]`},
		{"not a separator: name", "$PREV[,]", Raw, `x`, `$PREV[,]`},
		{"refused renders whole", explode, URL, `{"a":1}`, "https://h.test/pet/findByStatus?status=%7B%22a%22%3A1%7D"},
	}
	for _, tt := range tests {
		v := Values{Args: Split(tt.body)}
		if got := Render(tt.tmpl, tt.mode, v); got != tt.want {
			t.Errorf("%s: Render(%q, %q) = %q, want %q", tt.name, tt.tmpl, tt.body, got, tt.want)
		}
	}
}

// Check refuses what a join reference cannot render as a list, naming the
// argument and why, and passes everything else.
func TestCheck(t *testing.T) {
	tests := []struct {
		tmpl, body, want string
	}{
		{"https://h.test/p?s=$1[&s=]", `["a","b"]`, ""},
		{"https://h.test/p?s=$1[&s=]", `sold`, ""},
		{"https://h.test/p?s=$1[&s=]", ``, ""},
		{"https://h.test/p?s=$1", `{"a":1}`, ""},    // no join: as today
		{"https://h.test/p?s=$1[]", `{"a":1}`, ""},  // not a join
		{"https://h.test/p?s=$2[,]", `{"a":1}`, ""}, // argument 2 is missing: empty
		{"https://h.test/p?s=$1[&s=]", `{"a":1}`, `argument 1 is a JSON object; $1[&s=] takes a JSON array of strings, numbers or booleans, or one plain value`},
		{"x=$1&y=$2[,]", `a| [1,2`, `argument 2 is not valid JSON (it begins with '['); $2[,] takes a JSON array of strings, numbers or booleans, or one plain value`},
		{"$1[,]", `["a",{"b":1}]`, `argument 1 is a JSON array whose item 2 is an object; $1[,] takes a JSON array of strings, numbers or booleans, or one plain value`},
		{"$1[,]", `[["a"]]`, `argument 1 is a JSON array whose item 1 is an array; $1[,] takes a JSON array of strings, numbers or booleans, or one plain value`},
		{"$1[,]", `["a",null]`, `argument 1 is a JSON array whose item 2 is null; $1[,] takes a JSON array of strings, numbers or booleans, or one plain value`},
		{"$1[,]$2[,]", `{}|{}`, `argument 1 is a JSON object; $1[,] takes a JSON array of strings, numbers or booleans, or one plain value`},
	}
	for _, tt := range tests {
		err := Check(tt.tmpl, Values{Args: Split(tt.body)})
		if got := fmt.Sprint(err); (err == nil) != (tt.want == "") || err != nil && got != tt.want {
			t.Errorf("Check(%q, %q) = %v, want %q", tt.tmpl, tt.body, err, tt.want)
		}
	}
}
