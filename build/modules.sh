#!/usr/bin/env bash
# build/modules.sh — build rowcall's example fn modules (wasm/examples) from source.
#
#   build/modules.sh [--no-install] [--no-go] [--out DIR]
#
# Installs whatever toolchain is missing (unless --no-install):
#   apt-get: clang lld wasi-libc libclang-rt-14-dev-wasm32 (C), wabt (WAT)
#   npm:     assemblyscript and @assemblyscript/wasi-shim, versions pinned in
#            build/package.json and build/package-lock.json, into build/node_modules
#   Go is assumed (it builds rowcall itself).
# then builds every module into build/out/modules/<name>.wasm (ignored by git), the
# hostile test modules (and the Go sandbox probe) into build/out/modules/hostile/,
# and copies the small
# artifacts (C, AssemblyScript, WAT) over the committed ones in wasm/examples/
# when they differ, saying which. The Go module (~2.6 MB) is never committed.
#
#   --no-install  exit 3 naming the missing tool instead of installing it
#   --no-go       skip the Go module
#   --out DIR     build into DIR and leave wasm/examples/ alone (the
#                 reproducibility test uses this)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$root/build/out/modules
install=1 go=1 sync=1
while [ $# -gt 0 ]; do
	case $1 in
	--no-install) install=0 ;;
	--no-go) go=0 ;;
	--out) out=$2; sync=0; shift ;;
	*) echo "usage: build/modules.sh [--no-install] [--no-go] [--out DIR]" >&2; exit 2 ;;
	esac
	shift
done
started=$(date +%s)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out/hostile"

asc=$root/build/node_modules/.bin/asc
have_c() { echo 'int main(void){return 0;}' | clang --target=wasm32-wasi --sysroot=/usr -x c - -o "$tmp/probe.wasm" >/dev/null 2>&1; }
have_wat() { command -v wat2wasm >/dev/null; }
have_as() { [ -x "$asc" ] && command -v node >/dev/null; }

missing() {
	local m=()
	have_c || m+=("C: clang lld wasi-libc libclang-rt-14-dev-wasm32")
	have_wat || m+=("WAT: wabt")
	have_as || m+=("AssemblyScript: node and build/node_modules (npm ci --prefix build)")
	[ $go = 0 ] || command -v go >/dev/null || m+=("Go: the go command")
	printf '%s\n' "${m[@]}"
}

if [ -n "$(missing)" ]; then
	if [ $install = 0 ]; then
		echo "build/modules.sh: missing toolchain:" >&2
		missing | sed 's/^/  /' >&2
		exit 3
	fi
	if ! have_c || ! have_wat || ! command -v node >/dev/null; then
		sudo=; [ "$(id -u)" = 0 ] || sudo=sudo
		pkgs="clang lld wasi-libc libclang-rt-14-dev-wasm32 wabt"
		command -v node >/dev/null || pkgs="$pkgs nodejs npm"
		echo "+ apt-get install -y $pkgs"
		$sudo apt-get update -q >/dev/null
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q $pkgs >/dev/null
	fi
	if ! have_as; then
		echo "+ npm ci --prefix build"
		npm ci --prefix "$root/build" --no-audit --no-fund --loglevel=error >/dev/null
	fi
	if [ -n "$(missing)" ]; then
		echo "build/modules.sh: still missing after installing:" >&2
		missing | sed 's/^/  /' >&2
		exit 3
	fi
fi

cd "$root"
ex=wasm/examples
run() { echo "+ $*"; "$@"; }

# C: wasi-libc, optimized for size, stripped (no paths or debug info inside).
run clang --target=wasm32-wasi --sysroot=/usr -Oz -s -o "$out/now.wasm" $ex/now/now.c

# AssemblyScript: the WASI shim maps process.* to wasi_snapshot_preview1.
run "$asc" $ex/upper/upper.ts --config build/node_modules/@assemblyscript/wasi-shim/asconfig.json \
	-Oz --noAssert --runtime stub -o "$out/upper.wasm"

# WAT.
run wat2wasm $ex/echo/echo.wat -o "$out/echo.wasm"
for f in $ex/hostile/*.wat; do
	run wat2wasm "$f" -o "$out/hostile/$(basename "$f" .wat).wasm"
done

# Go: a WASI preview 1 command; built here and by the tests, never committed.
if [ $go = 1 ]; then
	GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 run go build -trimpath -buildvcs=false -ldflags='-s -w' \
		-o "$out/last_reply_of.wasm" ./$ex/last_reply_of
	GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 run go build -trimpath -buildvcs=false -ldflags='-s -w' \
		-o "$out/hostile/probe.wasm" ./$ex/hostile/probe
fi

if [ $sync = 1 ]; then
	small="now.wasm upper.wasm echo.wasm"
	for f in $ex/hostile/*.wat; do small="$small hostile/$(basename "$f" .wat).wasm"; done
	for f in $small; do
		if ! cmp -s "$out/$f" "$ex/$f"; then
			cp "$out/$f" "$ex/$f"
			echo "updated $ex/$f (commit it)"
		fi
	done
fi
echo "built $(find "$out" -name '*.wasm' | wc -l) modules into ${out#"$root"/} in $(($(date +%s) - started))s"
