;; For WASI runtimes other than subako that link modules (e.g. `wasmtime run --preload subako_http=...`):
;; the two subako_http imports, failing every request, so the module loads and its tools without HTTP run.
(module
  (func (export "request") (param i32 i32) (result i32) i32.const -1)
  (func (export "read_response") (param i32 i32) (result i32) i32.const -2))
