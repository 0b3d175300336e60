/*
 * greet: the example function package. One tool, `greet`, that says hello — the spec's own example.
 * Build: npm run fixtures (clang --target=wasm32-wasi -O2 -s).
 */
// build-flags: -I../../../test/fixtures/c/mcp
#include "mcp_guest.h"

static const char *TOOLS =
  "{\"tools\":[{\"name\":\"greet\",\"description\":\"Greet someone by name.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"description\":\"Who to greet.\"}},"
  "\"required\":[\"name\"]},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\"}},\"required\":[\"message\"]}}]}";

int main(void) {
  char *buf = NULL; size_t cap = 0;
  for (span line; (line = mg_read_line(&buf, &cap)).p;) {
    span id = mg_get(line, "id"), method = mg_get(line, "method"), params = mg_get(line, "params");
    if (!id.n) continue; /* a notification */
    if (mg_is(method, "server/discover")) { mg_answer(id, MG_DISCOVER_RESULT); continue; }
    if (mg_is(method, "tools/list")) { mg_answer(id, TOOLS); continue; }
    if (mg_is(method, "tools/call")) {
      char *name = mg_str(mg_get(mg_get(params, "arguments"), "name"));
      if (!mg_is(mg_get(params, "name"), "greet")) { mg_answer_text(id, "unknown tool", 1); continue; }
      if (!name || !*name) { mg_answer_text(id, "name must not be empty", 1); free(name); continue; }
      char *msg = malloc(strlen(name) + 16), *json = malloc(strlen(name) + 32);
      sprintf(msg, "Hello, %s!", name);
      sprintf(json, "{\"message\":\"%s\"}", msg);
      printf("{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":", (int)id.n, id.p);
      mg_put_json_string(stdout, json);
      printf("}],\"structuredContent\":%s}}\n", json);
      fflush(stdout);
      free(json);
      fprintf(stderr, "greeted %s\n", name);
      free(msg); free(name);
      continue;
    }
    printf("{\"jsonrpc\":\"2.0\",\"id\":%.*s,\"error\":{\"code\":-32601,\"message\":\"method not found\"}}\n", (int)id.n, id.p);
    fflush(stdout);
  }
  return 0;
}
