;; subako_http_stub.wat: a stand-in for the `subako_http` host module, for trying a package in a WASI runtime
;; that links one module into another (wasmtime's --preload, a component linker) instead of providing the
;; import itself. Every request fails as the ABI's misuse codes say: `request` answers -1 (as if the range
;; were outside memory), `read_response` -2 (no answer held). subako.h reports either as SUBAKO_HTTP_ABI, so
;; a tool that makes no request runs as it would under subako, and one that does gets an error it can show.
;;
;;   wasm-tools parse subako_http_stub.wat -o subako_http_stub.wasm   (or wat2wasm, or npm's wabt)
;;   wasmtime run --preload subako_http=subako_http_stub.wasm module.wasm < request.jsonl
(module
  (func (export "request") (param i32 i32) (result i32) i32.const -1)
  (func (export "read_response") (param i32 i32) (result i32) i32.const -2))
