;; grow: a memory-growth bomb. Grows linear memory 16 pages (1 MiB) at a time until
;; memory.grow fails, then traps. Expected: ERR:fn:memory_limit:<pages>.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $more
      (br_if $more (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))
    unreachable))
