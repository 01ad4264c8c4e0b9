# rowcall's two everyday commands are `make run` and `make test` (see README.md).

# The core: every package the local host and the Cloudflare worker share. It must
# build for GOOS=js GOARCH=wasm as well as natively.
CORE = . ./api ./sqlstore ./migrations ./dispatch ./args ./redact ./runners/flow ./runners/httpcall ./ledger ./typed ./examples

.PHONY: run test wasm-check vet

run:
	go run ./host serve

test: vet wasm-check
	go test -count=1 ./...

vet:
	@test -z "$$(gofmt -l . | grep -v node_modules)" || (echo "gofmt needed:"; gofmt -l .; exit 1)
	go vet ./...

wasm-check:
	GOOS=js GOARCH=wasm go build $(CORE)
