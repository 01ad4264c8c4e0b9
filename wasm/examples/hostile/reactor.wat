;; reactor: a valid module with no _start export (a library, not a command).
;; Expected: refused at registration: rowcall runs WASI commands.
(module
  (memory (export "memory") 1)
  (func (export "add") (param i32 i32) (result i32)
    (i32.add (local.get 0) (local.get 1))))
