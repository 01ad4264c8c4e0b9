;; spill: fills its memory from offset 4096 to 8191 with 0xAB and exits 0 with
;; no output. Run before peek, it proves one call's memory never reaches the next.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (memory.fill (i32.const 4096) (i32.const 0xAB) (i32.const 4096))))
