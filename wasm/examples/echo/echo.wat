;; echo: prints its arguments joined by single spaces (hand-written WAT).
;;
;;   [ECHO]a|b c[/ECHO]  with content ["$1","$2"]  →  a b c
;;
;; A WASI preview 1 command (see wasm/ABI.md). args_get writes argv[0..n] into one
;; buffer as NUL-terminated strings laid end to end; this module turns the NULs
;; between argv[1] and the last argument into spaces and writes that slice to stdout
;; in one fd_write.
;;
;; Memory layout: 0 argc, 4 argv buffer size, 16 iovec {ptr, len}, 24 nwritten,
;; 1024 the argv pointer array, then the argv buffer (memory grows to fit it).
(module
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get" (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)

  (func (export "_start")
    (local $argc i32) (local $size i32) (local $buf i32) (local $start i32) (local $end i32) (local $i i32)
    (drop (call $args_sizes_get (i32.const 0) (i32.const 4)))
    (local.set $argc (i32.load (i32.const 0)))
    (local.set $size (i32.load (i32.const 4)))
    (if (i32.lt_u (local.get $argc) (i32.const 2)) (then (return)))

    ;; the pointer array at 1024, the strings right after it; grow memory to fit
    (local.set $buf (i32.add (i32.const 1024) (i32.shl (local.get $argc) (i32.const 2))))
    (local.set $i (i32.sub
      (i32.shr_u (i32.add (i32.add (local.get $buf) (local.get $size)) (i32.const 65535)) (i32.const 16))
      (memory.size)))
    (if (i32.gt_s (local.get $i) (i32.const 0))
      (then (if (i32.eq (memory.grow (local.get $i)) (i32.const -1)) (then unreachable))))
    (drop (call $args_get (i32.const 1024) (local.get $buf)))

    ;; [start, end): from argv[1] up to the final NUL; inner NULs become spaces
    (local.set $start (i32.load (i32.const 1028)))
    (local.set $end (i32.sub (i32.add (local.get $buf) (local.get $size)) (i32.const 1)))
    (local.set $i (local.get $start))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
        (if (i32.eqz (i32.load8_u (local.get $i)))
          (then (i32.store8 (local.get $i) (i32.const 32))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))

    (i32.store (i32.const 16) (local.get $start))
    (i32.store (i32.const 20) (i32.sub (local.get $end) (local.get $start)))
    (drop (call $fd_write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 24))))
)
