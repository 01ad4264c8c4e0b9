// upper: prints its arguments in upper case, joined by single spaces (AssemblyScript).
//
//   [UPPER]hello wörld[/UPPER]  →  HELLO WÖRLD
//
// A WASI preview 1 command (see wasm/ABI.md): process.argv[0] is the module name and
// the row's arguments follow. Built by build/modules.sh with the pinned compiler in
// build/package.json and @assemblyscript/wasi-shim, which maps process.* to
// wasi_snapshot_preview1 imports.

const argv = process.argv;
let out = "";
for (let i = 1; i < argv.length; i++) {
  if (i > 1) out += " ";
  out += argv[i];
}
process.stdout.write(out.toUpperCase());
