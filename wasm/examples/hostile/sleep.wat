;; sleep: asks WASI poll_oneoff for a one-hour sleep on the monotonic clock.
;; Expected: ERR:fn:timeout:<limit> at the call's time limit, not an hour later.
;;
;; Subscription at 0 (48 bytes): userdata u64, tag u8 = 0 (clock) at 8,
;; clock id u32 = 1 (monotonic) at 16, timeout u64 (ns) at 24, precision u64 at 32,
;; flags u16 = 0 (relative) at 40. The event is written at 64, the count at 128.
(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (i32.store8 (i32.const 8) (i32.const 0))
    (i32.store (i32.const 16) (i32.const 1))
    (i64.store (i32.const 24) (i64.const 3600000000000))
    (drop (call $poll_oneoff (i32.const 0) (i32.const 64) (i32.const 1) (i32.const 128)))))
