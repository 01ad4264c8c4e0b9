// Package modules is the registry of the WebAssembly modules that fn rows run.
//
// A module is registered under a name (see [NameRule]) with [Registry.Put],
// which checks the bytes before accepting them: at most [MaxSize] bytes, a core
// WebAssembly module, a WASI preview 1 command (it exports _start), importing
// nothing but the wasi_snapshot_preview1 functions the sandbox offers (see
// [AllowedImports] and wasm/ABI.md), tables of at most [MaxTableEntries]
// initial entries, code within the bounds that keep compiling cheap
// ([MaxFunctions], [MaxBodySize], [MaxLocals], [MaxTotalLocals], [MaxNesting],
// [MaxBrTable]; checked by [Inspect] before any compiler reads the bytes), and
// compiling and linking in the sandbox
// (the fn runner is the [Compiler] on a host). An fn row's target names a module,
// optionally pinned to its code: "now" or "now@sha256:<64 hex digits>"
// ([Registry.Resolve]).
//
// Metadata (name, SHA-256 digest, size, version, timestamps) is the modules
// table of migrations/0005_modules.sql. The bytes sit behind [BlobStore],
// addressed by digest: [SQLBlobs] is the module_blobs table, in chunks of at most
// [ChunkSize] bytes because D1 caps a value at 2,000,000; the worker keeps them
// in its R2 bucket when it has one bound (worker/r2blobs.go). Every write is a single SQL statement (Cloudflare
// D1 has no interactive transactions): the metadata upsert bumps version in the
// statement itself, [Registry.PutIf] compares versions optimistically, and bytes
// are written before the metadata that points at them.
//
// Errors are *rowcall.Error with the codes below; the HTTP API maps them:
//
//	module_bad_name, module_bad_target                   400
//	module_not_wasm, module_invalid, module_not_command,
//	module_forbidden_import,
//	module_too_complex:<bound> (locals, nesting, …)      422
//	too_large                                            413
//	not_found                                            404
//	module_in_use, module_digest_mismatch                409
//	version_conflict                                     412
//	module_blob_missing                                  500 (re-PUT the module)
package modules
