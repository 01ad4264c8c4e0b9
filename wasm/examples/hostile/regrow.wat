;; regrow: grows its memory by 4 pages, writes 32 bytes of the new pages (from
;; offset 262144 + 4096, which it never wrote) to stdout as hex, then fills the
;; new pages with 0xAB, a secret the next call must not see. Expected: 64 zeros,
;; every call — pages that memory.grow adds are zero (the Wasm spec), even when
;; the host reuses the buffer of an earlier call that grew as far.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "0123456789abcdef")
  (func (export "_start")
    (local $i i32) (local $b i32)
    (drop (memory.grow (i32.const 4)))
    (loop $next
      (local.set $b (i32.load8_u (i32.add (i32.const 266240) (local.get $i))))
      (i32.store8 (i32.add (i32.const 8192) (i32.shl (local.get $i) (i32.const 1)))
        (i32.load8_u (i32.shr_u (local.get $b) (i32.const 4))))
      (i32.store8 (i32.add (i32.const 8193) (i32.shl (local.get $i) (i32.const 1)))
        (i32.load8_u (i32.and (local.get $b) (i32.const 15))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $next (i32.lt_u (local.get $i) (i32.const 32))))
    (i32.store (i32.const 16) (i32.const 8192))
    (i32.store (i32.const 20) (i32.const 64))
    (drop (call $fd_write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 24)))
    (memory.fill (i32.const 65536) (i32.const 0xAB) (i32.const 262144))))
