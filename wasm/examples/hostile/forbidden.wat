;; forbidden: imports env.foo, a host function the sandbox does not offer.
;; Expected: refused at registration, naming env.foo.
(module
  (import "env" "foo" (func $foo))
  (memory (export "memory") 1)
  (func (export "_start") (call $foo)))
