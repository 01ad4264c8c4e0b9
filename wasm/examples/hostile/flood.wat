;; flood: writes 64 KiB of 'A' to stdout forever, ignoring fd_write's errors.
;; Expected: ERR:fn:output_limit:<bytes>.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (func (export "_start")
    (local $i i32)
    (local.set $i (i32.const 1024))
    (block $filled
      (loop $fill
        (br_if $filled (i32.ge_u (local.get $i) (i32.const 66560)))
        (i32.store8 (local.get $i) (i32.const 65))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $fill)))
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 65536))
    (loop $forever
      (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))
      (br $forever))))
