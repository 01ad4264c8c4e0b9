;; loop: never returns. Expected: ERR:fn:timeout:<limit>, and the host serves the next call.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $forever (br $forever))))
