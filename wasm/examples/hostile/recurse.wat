;; recurse: calls itself without end. Expected: ERR:fn:trap:stack overflow, and
;; the runner keeps serving.
(module
  (memory (export "memory") 1)
  (func $down (param $n i64)
    (call $down (i64.add (local.get $n) (i64.const 1))))
  (func (export "_start")
    (call $down (i64.const 0))))
