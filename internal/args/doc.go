// Package args holds rowcall's argument rules: how an invocation body becomes
// arguments, and how a template (an http row's target and body, an fn row's
// argument array, a flow step's body) has those arguments put into it. This
// comment is the reference; the rules are written down here and nowhere else.
//
// # Arguments
//
// An invocation body is one string. [Split] cuts it on every '|', exactly like
// the seed's String(body).split('|'): "37.77|-122.42" is two arguments, "" is
// one empty argument, and there is no quoting. Only the last argument of a row
// can hold a pipe, and only when the template reads it with $N+.
//
// # References
//
// A template is text with references in it. [Render] replaces each one:
//
//	$N       the N-th argument, 1-based; the digits are greedy ($12 is argument
//	         12, never argument 1 followed by "2"). An argument that was not
//	         given renders empty; arguments the template never names are ignored.
//	$N+      arguments N to the end joined back together with '|', so the body
//	         ROUTER|{"content":"a|b"} read by $2+ gives {"content":"a|b"} intact.
//	         Empty when there are fewer than N arguments.
//	$N[sep]  argument N as a list. When it is a JSON array of strings, numbers
//	         or booleans, each item (a string without its quotes) is escaped
//	         as a value of its own and the items are joined by sep, which is
//	         template text and goes in as written; any other argument, an
//	         empty or missing one included, renders as one value, as $N does.
//	         sep is one or more bytes, none of them '[', ']', '$', '"', a
//	         blank or a control character. In a URL, with argument 1
//	         ["available","sold"] (and, after the arrow, with argument 1 sold):
//	           ?status=$1[&status=]  ?status=available&status=sold   ?status=sold
//	           ?status=$1[,]         ?status=available,sold          ?status=sold
//	           /pets/$1[,]           /pets/available,sold            /pets/sold
//	         An empty array renders empty. Refused: a JSON object, text that
//	         begins with '[' or '{' and is not JSON, and an item that is an
//	         object, an array or null. [Check] reports the refusal (the
//	         runners fail the call with bad_args and send nothing); [Render]
//	         itself renders such an argument whole. $$N[sep] writes the items
//	         raw. "$1[]", "$1[a b]" and "$1+[,]" are a reference followed by
//	         text, as before, and named values take no separator.
//	$NAME    a named value from Values.Vars, NAME being [A-Za-z_][A-Za-z0-9_]*:
//	         $PREV is the previous flow step's output, and every "=> NAME" in a
//	         flow binds one. A name with no value is left in place as written,
//	         not emptied: "$TODO" stays "$TODO".
//	$NAME.p  a field picked out of a named value that holds JSON, p being a
//	         gjson path (github.com/tidwall/gjson) of segments made of
//	         [A-Za-z0-9_#-] joined by single dots: $PREV.current.temperature_2m,
//	         $R.items.0.id, $R.items.# (the array's length). A string field
//	         renders without its quotes; a number, true, false, null, object or
//	         array renders as its JSON text. A value that is an http row's
//	         result, "HTTP <status>:<body>", is read through its body: after an
//	         http step, $PREV.current.temperature_2m reads the JSON the upstream
//	         answered ($PREV alone is still the whole "HTTP 200:…" string).
//	         When the value (or that body) is not JSON or the
//	         path leads nowhere, the reference renders EMPTY (unlike an unknown
//	         name, which stays literal). A dot that is not followed by a path
//	         character is plain text, so "see $PREV." keeps its full stop; but
//	         "$F.txt" reads field "txt" of $F (empty unless $F is JSON with
//	         that field), so never write a name straight before ".word".
//	$SELF    the base URL of the host running the call (scheme://host[:port],
//	         no trailing slash), resolved at call time: an http row that calls
//	         its own host writes "GET $SELF/api/directory/$1", and the row
//	         keeps working when exported to a host at another address. The
//	         runner puts it in Values.Vars[Self] from the host's configuration
//	         (package httpcall: Config.Self), so it is written unescaped in every
//	         mode, as $$SELF would be; without a value it stays as written.
//	$$REF    any of the above with a second '$' ($$1, $$2+, $$PREV, $$R.id):
//	         the value goes in raw, with no escaping whatever the mode. An
//	         unresolved $$NAME stays as written, both dollars included.
//
// Anything else that starts with '$' is plain text: "$0", "$", "$ 5", "$-1".
// Only named values take a path; "$1.5" is argument 1 followed by ".5".
//
// # Escaping
//
// A value is escaped for the place it lands in, so a quote, '&' or '/' inside
// an argument can never break out of its slot. The [Mode] says what the
// template is:
//
//	Raw   values go in unchanged. Used for flow step bodies and agent messages.
//	URL   the template is a URL. A value before the URL's first '?' is
//	      path-escaped (url.PathEscape: "a/b c" becomes "a%2Fb%20c"), and in
//	      the authority (after the first "://", before the '/', '?' or '#'
//	      that ends it) its '@' too, so a value cannot make the host a user
//	      name ("https://h:$1/" with 80@evil gives h:80%40evil, which no URL
//	      parser takes); a value after it is query-escaped (url.QueryEscape:
//	      "a&b=c" becomes "a%26b%3Dc"). Used for an http row's target.
//	JSON  the template is JSON text. A value that lands inside a string literal
//	      ("$1") is escaped as string characters, no quotes added. A value that
//	      lands outside any string literal goes in as-is when it is exactly
//	      one valid JSON value (5, true, {"a":1}, "x"), and otherwise as a
//	      quoted JSON string. With {"n": $1}, 5 gives {"n": 5}, `5, "x": 1`
//	      gives {"n": "5, \"x\": 1"}, and a missing argument gives {"n": ""}.
//	      Used for fn argument arrays (["$1","$2"]) and JSON bodies.
//	Body  an http row's body template; the mode is picked from the template,
//	      with surrounding blanks ignored:
//	        1. exactly one reference ($2+, $1, $PREV, $$1, $R.id): the output is
//	           that value, unchanged and untrimmed (unresolved names stay
//	           literal);
//	        2. first character '{' or '[': JSON;
//	        3. a form body: no blank anywhere, and it begins with a field name
//	           of [A-Za-z0-9_.~%[]-] followed by '=' (a=$1&b=$2, q=$1):
//	           every value is query-escaped (url.QueryEscape);
//	        4. anything else: Raw.
//
// Whether a value is "in the authority", "before the '?'" or "inside a string
// literal" is decided by the text written so far: the template's own text and
// any $$ raw values, never by escaped values (which cannot contain a '/', '?'
// or an unescaped '"').
// A backslash in the template right before a reference inside a JSON string
// is taken as a literal backslash ("\\" is written) so it cannot swallow the
// value's first character.
//
// JSON string escaping writes '"' and '\' with a backslash, control characters
// as \n, \r, \t, \b, \f or \u00XX, and each invalid UTF-8 byte as \ufffd.
//
// A template with no '$' is returned unchanged, without allocating; any other
// template is rendered in one pass.
package args
