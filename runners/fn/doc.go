// Package fn is the runner of fn rows: a call runs a registered WebAssembly
// module (package modules) as a WASI preview 1 command inside a wazero sandbox.
// The module ABI is wasm/ABI.md; in short:
//
//   - target names the module, optionally pinned: "now" or "now@sha256:<hex>";
//   - the content payload is a JSON array template of the arguments, default
//     ["$1"], rendered with args.Render in args.JSON mode; its elements become
//     argv[1..] (a string as is, any other JSON value as its JSON text), and
//     argv[0] is the module name;
//   - the result is the module's stdout, less one trailing newline; exit code 0
//     is success.
//
// The sandbox offers arguments, the wall and monotonic clocks, sleep (cut short
// at the time limit), crypto-quality random bytes, stdout and stderr. There is no
// filesystem (no preopened directory), no network, no environment variable and
// no stdin (reads see end of file). Each call gets a fresh instance whose memory
// reads as zero wherever it grows (the host reuses buffers, never their bytes),
// bounded in memory (Config.MemoryLimitPages), tables (modules.MaxTableEntries
// entries in all; table.grow past them returns -1), time (Config.Timeout, enforced through the
// context with wazero's WithCloseOnContextDone; where nothing can interrupt a
// running module — Go on js/wasm — Config.Fuel bounds every loop instead, see
// package runners/fn/fuel) and output (Config.OutputLimit). At most
// Config.MaxConcurrent instances run at once; a call that finds none free waits
// up to Config.QueueWait for one.
//
// Failures are results, never Go errors or crashes, and the runner keeps
// serving after any of them. Besides the seed's three (ERR:fn:unknown_target:<target>,
// ERR:fn:bad_content_json:<parser message>, ERR:fn:content_not_array) they are
// ERR:fn:<kind>:<detail>[:<stderr tail>]. For exit, trap, timeout, memory_limit
// and output_limit the detail holds no ':' and the stderr tail (omitted when
// empty) is the last Config.StderrTail bytes the module wrote to stderr:
//
//	exit:<code>                  the module exited with a non-zero code
//	trap:<message>               a WebAssembly trap (unreachable, out of bounds,
//	                             stack overflow, …)
//	timeout:<limit>              still running at Config.Timeout (e.g. timeout:5s),
//	                             or out of Config.Fuel (timeout:10000000 loop iterations)
//	memory_limit:<pages>         failed after its memory reached the limit, or
//	                             declares more initial memory than the limit
//	output_limit:<bytes>         wrote more than Config.OutputLimit to stdout
//	canceled                     the caller's context was canceled
//	busy:<n> calls running, none finished within <wait>
//	                             Config.MaxConcurrent calls held every slot for
//	                             Config.QueueWait; nothing ran, try again later
//	digest_mismatch:sha256:<pinned>!=sha256:<current>   the pinned code changed
//	bad_args:<why>               an argument holds a NUL byte, or is refused by a
//	                             join reference $N[sep] (args.Check)
//	module_unavailable:<why>, compile:<why>, instantiate:<why>, registry:<why>
//	                             host-side problems, named
//
// One Runner is one wazero runtime with a compilation cache (in memory, and on
// disk under Config.CacheDir when set); compiled modules are kept by digest, so
// a module is compiled once per host however many rows and calls use it. A
// Runner is safe for concurrent calls. It builds for GOOS=js GOARCH=wasm too,
// where wazero runs its interpreter.
package fn
