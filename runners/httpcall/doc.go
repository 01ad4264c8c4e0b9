// Package httpcall is the runner for http rows: it calls somebody else's API.
//
// # Request
//
// The row's target is "METHOD url" (GET https://api.x.ai/v1/models). The URL
// is rendered with args.URL (path-escaped before '?', query-escaped after)
// from the invocation's arguments and named values. The body is the row's
// payload (content without its '#' documentation lines) rendered with
// args.Body; an empty payload sends no body. Content-Type is
// application/json when the rendered body is a JSON object or array,
// application/x-www-form-urlencoded when it is form-shaped (no blanks, starts
// with name=), and text/plain; charset=utf-8 otherwise.
//
// A row that calls its own host writes its URL as $SELF/… (GET
// $SELF/api/directory/$1): $SELF is the host's base URL from Config.Self,
// resolved at each call, so the row is portable between hosts. The hosts
// serve those requests in-process (outbound.Self), credential and all.
//
// # Auth
//
// The row's auth column names how a credential is applied and which
// environment variable holds it; values are read through Invocation.Env at
// call time and never stored:
//
//	""                          no credential
//	bearer:ENV                  Authorization: Bearer <ENV>
//	basic:ENV                   Authorization: Basic base64("<ENV>:"); when the
//	                            value holds a ':' it is used as user:password as is
//	headers:{"K":"$ENV", …}     each header, every $NAME in its value replaced
//	query:param=ENV             param=<url-encoded ENV> appended to the URL
//	oauth:{…}                   OAuth 2.0 client credentials, below
//
// A variable missing from the environment (or empty) applies no credential: no header,
// no query parameter (a header whose value names any missing variable is not
// sent at all). The request still goes out and the upstream's 401 is the
// signal, as in the seed. An unknown prefix fails before anything is sent with
// ERR:http:<KEY>:ERR:auth:unknown_prefix:<prefix>; a malformed headers or
// oauth object, or a query spec without '=', with
// ERR:http:<KEY>:ERR:auth:bad_spec:<message>. Prefixes are matched without
// regard to case.
//
// # OAuth
//
//	oauth:{"token_url":"https://auth.example/oauth/token",
//	       "client_id":"$EXAMPLE_CLIENT_ID","client_secret":"$EXAMPLE_CLIENT_SECRET",
//	       "scope":"read","audience":"https://api.example","auth_style":"basic"}
//
// token_url, client_id and client_secret (or private_key, below) are
// required (an MCP row may leave token_url out: runners/mcpcall discovers it
// from the server, and an http row without it fails with
// ERR:http:<KEY>:ERR:auth:bad_spec); scope, audience and auth_style are
// optional. Every field may name environment variables with
// $NAME. The runner makes an RFC 6749 §4.4 client-credentials request, with
// golang.org/x/oauth2/clientcredentials: a POST
// of grant_type=client_credentials (plus scope and audience when set) to
// token_url, with the client authenticated by HTTP Basic (auth_style "basic",
// the default, RFC 6749 §2.3.1) or by client_id and client_secret form fields
// (auth_style "body"). The answer is JSON (or form-encoded, when its
// Content-Type says so); its access_token is sent upstream as
// Authorization: Bearer <access_token>.
//
// A client registered with a key (private_key_jwt, RFC 7523 §2.2) writes
// private_key in place of client_secret:
//
//	oauth:{"token_url":"https://auth.example/oauth/token","client_id":"$EXAMPLE_CLIENT_ID",
//	       "private_key":"$EXAMPLE_CLIENT_KEY","kid":"key-1","alg":"ES256",
//	       "assertion_audience":"https://auth.example"}
//
// private_key is one variable's name ("$NAME"; rowcall.ParseAuth refuses
// anything else with auth_private_key_in_row, so the key is never in a row),
// whose value is a PEM private key: PKCS#8, SEC 1 (EC) or PKCS#1 (RSA), also
// on one line with literal \n. kid, alg and assertion_audience are optional:
// alg is one of rowcall.AssertionAlgs, and left out follows the key (ES256,
// ES384 or ES512 by an EC key's curve, RS256 for RSA, EdDSA for Ed25519);
// assertion_audience left out is the authorization server's issuer when
// runners/mcpcall discovered it, else token_url. Each token request sends
// client_id, client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer
// and client_assertion, a JWT signed with golang-jwt/jwt for that request:
// iss and sub client_id, aud as above, a random jti, iat, and exp a minute on;
// no secret and no Basic header. The assertion is redacted from the token
// endpoint's answers. A key that cannot sign (not PEM, not a private key, an
// alg it does not fit) fails before any request with
// ERR:http:<KEY>:ERR:auth:private_key:<message>, which names the variable and
// never quotes the key.
//
// Tokens are cached in memory, in the Runner, keyed by token_url, client_id,
// scope, audience and a SHA-256 of client_secret, or of the private key with
// its kid, alg and audience (so a rotated or wrong credential never reuses
// another's token). An entry lives until expires_in minus
// a margin of a tenth of its lifetime, at most one minute; an answer without
// expires_in is kept five minutes, and no token is kept over 24 hours. An upstream 401 drops the entry, so the
// next call fetches a fresh token. The token request uses the runner's client
// (so the same outbound policy applies), counts against the same call
// timeout, and is never made in shape mode. A token endpoint that fails gives
// ERR:http:<KEY>:ERR:auth:oauth_token:<message> with Status set to the token
// endpoint's status (so 401/403 reach the breaker) and Material false.
//
// # Results
//
//	2xx, 3xx      HTTP <status>:<body>
//	other status  ERR:http:<status>:<body>
//	no answer     ERR:http:fetch:<message>        (DNS, TLS, refused, outbound policy)
//	timeout       ERR:http:fetch:timeout after 30s
//	too large     ERR:http:too_large:<limit> bytes — …
//	bad target    ERR:http:bad_target:<message>
//	bad argument  ERR:http:bad_args:<message>     (a join reference $N[sep] refused its
//	                                               argument, args.Check; nothing sent)
//
// Output.Status is the upstream status and Output.Material is true whenever an
// upstream answered. Output.Secrets lists every value read from the
// environment and every token obtained, so the dispatcher can redact what it
// keeps; the runner itself already passes Result through redact.String with
// them, so an upstream that echoes a credential does not hand it to the
// caller. A fetch message never carries the request URL (which may hold a
// query credential). A dial refused by the host's outbound policy surfaces as
// ERR:http:fetch:<the policy's message>. Redirects (the token request's too)
// follow outbound.CheckRedirect, which both the host's and the worker's
// clients use: no Referer, and past the first request's origin no header but
// User-Agent and Accept* (so none the auth column set) and no body.
//
// The timeout (Config.Timeout, default 30 s) covers the whole call: token
// request, connection, upload and reading the body. The response body is
// capped at Config.MaxResponse (default 1 MiB). A larger body is an error, not
// a truncation: a cut JSON document is silently wrong, and every caller of a
// row would have to learn to detect it. Status and Material still report that
// the upstream answered.
//
// # Shape mode
//
// With Invocation.Shape the runner builds the request, sends nothing (not even
// a token request) and returns Output.Plan = {"method","url","headers","body"}
// and Result SHAPE:http:<METHOD> <url>. Credential material is removed: the
// headers the auth column sets are left out of the plan entirely (a present
// credential and a missing one both preview as "headers":{}), a query
// credential is written as [REDACTED], and the plan is passed through
// redact.Redact. Status is 0 and Material false.
//
// The runner takes its transport from Config.Client: the host passes the
// outbound policy's client, the Cloudflare worker a fetch-based one.
package httpcall
