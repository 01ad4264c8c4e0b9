;; bigmem: declares 2048 initial pages (128 MiB), past the default 1024-page limit.
;; Expected: refused at registration; ERR:fn:memory_limit:<pages>:… if run anyway.
(module
  (memory (export "memory") 2048)
  (func (export "_start")))
