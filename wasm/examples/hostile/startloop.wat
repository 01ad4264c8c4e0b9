;; startloop: a start section (run at instantiation, before _start) that never
;; returns. Expected: refused at registration, within the time limit.
(module
  (memory (export "memory") 1)
  (func $spin (loop $forever (br $forever)))
  (start $spin)
  (func (export "_start")))
