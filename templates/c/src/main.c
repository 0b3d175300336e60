/* {{name}}: a subako function package. Its tools are the table at the bottom; `subako build` compiles this. */
#define SUBAKO_IMPLEMENTATION
#include "subako.h"

/* greet: checks its arguments, then answers structured content (the model also reads it as JSON text). */
static void greet(subako_call *call) {
  const char *name = subako_arg_string(call, "name");     /* missing or not a string: the model is told */
  int excited = subako_arg_bool_or(call, "excited", 0);
  if (!subako_args_ok(call)) return;
  if (name[0] == '\0') {
    subako_error(call, "name must not be empty");
    return;
  }
  subako_json *out = subako_json_object();
  subako_json_set_string(out, "message", subako_format("Hello, %s%s", name, excited ? "!" : "."));
  subako_structured(call, out);
}

static const subako_tool TOOLS[] = {
  {
    .name = "greet",
    .description = "Greet someone by name.",
    .handler = greet,
    .input_schema = SUBAKO_JSON({
      "type": "object",
      "properties": {
        "name": {"type": "string", "description": "Who to greet."},
        "excited": {"type": "boolean", "description": "End with an exclamation mark."}
      },
      "required": ["name"]
    }),
    .output_schema = SUBAKO_JSON({
      "type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]
    }),
  },
};

int main(void) { return subako_serve(TOOLS, SUBAKO_COUNT(TOOLS)); }
