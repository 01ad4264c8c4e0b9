;; badsig: imports wasi_snapshot_preview1.fd_write with the wrong signature.
;; Expected: refused at registration (it does not link against the sandbox).
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (call $fd_write (i32.const 1))))
