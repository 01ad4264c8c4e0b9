;; bigtable: declares a table of 2,000,000 initial entries, more than the
;; sandbox allows (modules.MaxTableEntries). Expected: refused at registration.
(module
  (memory (export "memory") 1)
  (table 2000000 funcref)
  (func (export "_start")))
