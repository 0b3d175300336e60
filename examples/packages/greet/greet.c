/*
 * greet: the example function package. One tool, `greet`, that says hello — the spec's own example —
 * written with the C SDK (sdk/c/subako.h), as `subako init` starts a package.
 * Build: npm run fixtures (clang --target=wasm32-wasi -O2 -s -I sdk/c).
 */
// build-flags: -I../../../sdk/c
#define SUBAKO_IMPLEMENTATION
#include "subako.h"

static void greet(subako_call *call) {
  const char *name = subako_arg_string(call, "name");   /* missing or not a string: the model is told */
  if (!subako_args_ok(call)) return;
  if (name[0] == '\0') {
    subako_error(call, "name must not be empty");
    return;
  }
  fprintf(stderr, "greeted %s\n", name);                /* stderr is the call's log, kept in the trace */
  subako_json *out = subako_json_object();
  subako_json_set_string(out, "message", subako_format("Hello, %s!", name));
  subako_structured(call, out);                          /* the model reads it as JSON text too */
}

static const subako_tool TOOLS[] = {
  {
    .name = "greet",
    .description = "Greet someone by name.",
    .handler = greet,
    .input_schema = SUBAKO_JSON({
      "type": "object",
      "properties": {"name": {"type": "string", "description": "Who to greet."}},
      "required": ["name"]
    }),
    .output_schema = SUBAKO_JSON({
      "type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]
    }),
  },
};

int main(void) { return subako_serve(TOOLS, SUBAKO_COUNT(TOOLS)); }
