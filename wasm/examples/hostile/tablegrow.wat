;; tablegrow: a table-growth bomb. Its table declares no maximum (as Go's
;; linker writes it), and _start asks table.grow for 100,000,000 more entries
;; (about 760 MiB of host memory in wazero), then for 1,000. Expected:
;; "big:refused small:ok" — the sandbox caps every table at modules.MaxTableEntries,
;; so the big grow returns -1 like a memory.grow past the memory limit, and a
;; small one still works.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (table $t 1 funcref)
  (data (i32.const 64) "big:refused ")
  (data (i32.const 80) "big:grew    ")
  (data (i32.const 96) "small:ok\n")
  (data (i32.const 112) "small:refused\n")
  (func (export "_start")
    (local $small i32)
    (i32.store (i32.const 0)
      (select (i32.const 64) (i32.const 80)
        (i32.eq (table.grow $t (ref.null func) (i32.const 100000000)) (i32.const -1))))
    (i32.store (i32.const 4) (i32.const 12))
    (local.set $small (i32.eq (table.grow $t (ref.null func) (i32.const 1000)) (i32.const -1)))
    (i32.store (i32.const 8) (select (i32.const 112) (i32.const 96) (local.get $small)))
    (i32.store (i32.const 12) (select (i32.const 14) (i32.const 9) (local.get $small)))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 2) (i32.const 16)))))
