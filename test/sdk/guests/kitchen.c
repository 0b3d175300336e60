/*
 * kitchen: a guest built from sdk/c/subako.h at test time (test/sdk/c.test.ts) that uses every part of the
 * SDK: each content block, typed arguments, subako_http (inline, JSON, file output, error kinds), files
 * under /volume, and progress. Each tool is one thing a test asks of the SDK.
 */
#define SUBAKO_IMPLEMENTATION
#include "subako.h"

/* Two text blocks, in order. */
static void two_texts(subako_call *call) {
  subako_text(call, "first");
  subako_textf(call, "second: %d", 2);
}

/* Every typed accessor; answers what it read as structured content. */
static void typed(subako_call *call) {
  const char *s = subako_arg_string(call, "s");
  double n = subako_arg_number(call, "n");
  long long i = subako_arg_int(call, "i");
  int b = subako_arg_bool(call, "b");
  const subako_json *list = subako_arg_array(call, "list");
  const subako_json *obj = subako_arg_object(call, "obj");
  const char *opt = subako_arg_string_or(call, "opt", "fallback");
  long long count = subako_arg_int_or(call, "count", 7);
  if (!subako_args_ok(call)) {
    subako_text(call, "this block must never reach the model"); /* the argument problem wins */
    return;
  }
  subako_json *out = subako_json_object();
  subako_json_set_string(out, "s", s);
  subako_json_set_int(out, "s_bytes", (long long)strlen(s));
  subako_json_set_number(out, "n", n);
  subako_json_set_int(out, "i", i);
  subako_json_set_bool(out, "b", b);
  subako_json_set_int(out, "list_count", (long long)list->count);
  subako_json_set_string(out, "obj_json", subako_json_stringify(obj));
  subako_json_set_string(out, "opt", opt);
  subako_json_set_int(out, "count", count);
  subako_structured(call, out);
}

/* A string echoed byte for byte, with its length in bytes (escapes, \u0000 and non-ASCII survive). */
static void echo(subako_call *call) {
  const subako_json *v = subako_arg_value(call, "s");
  if (!v || v->type != SUBAKO_JSON_STRING) {
    subako_arg_problem(call, "s", "must be a string");
    return;
  }
  subako_json *out = subako_json_object();
  subako_json_set(out, "s", subako_json_stringn(v->string, v->length));
  subako_json_set_int(out, "bytes", (long long)v->length);
  subako_text(call, "echoed");
  subako_structured(call, out);
}

/* The PNG under /package as an inline image block. */
static void image(subako_call *call) {
  size_t length = 0;
  char *png = subako_read_file("/package/dot.png", &length);
  if (!png) {
    subako_error(call, "cannot read /package/dot.png");
    return;
  }
  subako_image(call, "image/png", png, length);
}

/* The PNG copied to a volume file (parent folders made), answered as a resource_link. */
static void chart(subako_call *call) {
  const char *file = subako_arg_string_or(call, "file", "/volume/tmp/charts/dot chart.png");
  size_t length = 0;
  char *png = subako_read_file("/package/dot.png", &length);
  int failed = png ? subako_write_file(file, png, length) : -1;
  if (failed) {
    subako_error(call, "cannot write %s (errno %d)", file, failed);
    return;
  }
  if (subako_link_file(call, file, "image/png") != 0) subako_error(call, "%s is not under /volume", file);
}

/* A tool failure with isError. */
static void fail(subako_call *call) { subako_error(call, "the %s went wrong", "thing"); }

/* GET a URL; answers status, a header and the JSON body, or the error kind. */
static void fetch(subako_call *call) {
  const char *url = subako_arg_string(call, "url");
  if (!subako_args_ok(call)) return;
  const char *const headers[] = {"accept", "application/json", "x-probe", "kitchen", NULL};
  subako_http_request request = {.url = url, .headers = headers};
  subako_http_response response = subako_http(&request);
  if (response.error != SUBAKO_HTTP_OK) {
    subako_error(call, "%s: %s", subako_http_error_name(response.error), response.error_message);
    return;
  }
  subako_json *out = subako_json_object();
  subako_json_set_int(out, "status", response.status);
  const char *type = subako_http_header(&response, "content-type");
  subako_json_set_string(out, "content_type", type ? type : "");
  const subako_json *body = subako_http_json(&response);
  if (body) subako_json_set(out, "body", (subako_json *)body);
  else subako_json_set_string(out, "text", response.body);
  subako_structured(call, out);
}

/* POST a JSON body built with the writer; answers what the server says it received. */
static void post(subako_call *call) {
  const char *url = subako_arg_string(call, "url");
  if (!subako_args_ok(call)) return;
  subako_json *order = subako_json_object();
  subako_json_set_int(order, "order", 1042);
  subako_json_set_string(order, "note", "caf\xc3\xa9 \"quoted\"\n");
  subako_http_request request = {.method = "POST", .url = url, .body_json = order, .timeout_ms = 5000};
  subako_http_response response = subako_http(&request);
  if (response.error != SUBAKO_HTTP_OK) {
    subako_error(call, "%s", subako_http_error_name(response.error));
    return;
  }
  subako_json *out = subako_json_object();
  subako_json_set_int(out, "status", response.status);
  subako_json_set(out, "echo", (subako_json *)subako_http_json(&response));
  subako_structured(call, out);
}

/* GET a URL into a volume file; answers the saved path and size. */
static void download(subako_call *call) {
  const char *url = subako_arg_string(call, "url");
  const char *file = subako_arg_string(call, "file");
  if (!subako_args_ok(call)) return;
  subako_http_request request = {.url = url, .output_file = file};
  subako_http_response response = subako_http(&request);
  if (response.error != SUBAKO_HTTP_OK) {
    subako_error(call, "%s", subako_http_error_name(response.error));
    return;
  }
  subako_json *out = subako_json_object();
  subako_json_set_string(out, "path", response.body_file);
  subako_json_set_int(out, "bytes", response.body_file_bytes);
  subako_structured(call, out);
}

/* Three progress notifications, then a text. */
static void progress(subako_call *call) {
  for (int i = 1; i <= 3; i++) subako_progress(call, i, 3, i == 3 ? "done" : NULL);
  subako_text(call, call->progress_token ? "with a token" : "without a token");
}

/* `v` built again from scratch with the builders (numbers from their double, not their text). */
static subako_json *rebuild(const subako_json *v) {
  switch (v->type) {
    case SUBAKO_JSON_NULL: return subako_json_null();
    case SUBAKO_JSON_BOOL: return subako_json_bool(v->boolean);
    case SUBAKO_JSON_NUMBER: return subako_json_number(v->number);
    case SUBAKO_JSON_STRING: return subako_json_stringn(v->string, v->length);
    case SUBAKO_JSON_ARRAY: {
      subako_json *array = subako_json_array();
      for (const subako_json *c = v->first; c; c = c->next) subako_json_push(array, rebuild(c));
      return array;
    }
    default: {
      /* Keys may hold a NUL: link children by hand with their lengths (subako_json_set takes C strings). */
      subako_json *object = subako_json_object();
      for (const subako_json *c = v->first; c; c = c->next) {
        subako_json *child = rebuild(c);
        subako_json_push(object, child);
        child->key = c->key;
        child->key_length = c->key_length;
      }
      return object;
    }
  }
}

/* Any JSON value back as it came (`same`, re-written from what was read) and rebuilt (`rebuilt`). */
static void roundtrip(subako_call *call) {
  const subako_json *v = subako_arg_value(call, "v");
  if (!v) {
    subako_arg_problem(call, "v", "is missing");
    return;
  }
  subako_json *out = subako_json_object();
  subako_json_set(out, "same", (subako_json *)v);
  subako_json_set(out, "rebuilt", rebuild(v));
  subako_structured(call, out);
}

/* The name of every error kind the SDK knows, in enum order (a test holds them to the host's list). */
static void kinds(subako_call *call) {
  subako_json *names = subako_json_array();
  for (int kind = SUBAKO_HTTP_OK; kind <= SUBAKO_HTTP_OTHER; kind++)
    subako_json_push(names, subako_json_string(subako_http_error_name((subako_http_error)kind)));
  subako_structured(call, subako_json_set(subako_json_object(), "kinds", names));
}

static const subako_tool TOOLS[] = {
  {.name = "two_texts", .description = "Two text blocks.", .handler = two_texts},
  {.name = "typed", .description = "Every typed accessor.", .handler = typed,
   .input_schema = SUBAKO_JSON({"type": "object", "properties": {
     "s": {"type": "string"}, "n": {"type": "number"}, "i": {"type": "integer"}, "b": {"type": "boolean"},
     "list": {"type": "array"}, "obj": {"type": "object"}, "opt": {"type": "string"}, "count": {"type": "integer"}},
     "required": ["s", "n", "i", "b", "list", "obj"]})},
  {.name = "echo", .description = "Echo a string.", .handler = echo,
   .input_schema = SUBAKO_JSON({"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}),
   .output_schema = SUBAKO_JSON({"type": "object", "properties": {"s": {"type": "string"}, "bytes": {"type": "integer"}}})},
  {.name = "image", .description = "An inline image.", .handler = image},
  {.name = "chart", .description = "An image file as a link.", .handler = chart,
   .input_schema = SUBAKO_JSON({"type": "object", "properties": {"file": {"type": "string"}}})},
  {.name = "fail", .description = "A tool error.", .handler = fail},
  {.name = "fetch", .description = "GET a URL.", .handler = fetch,
   .input_schema = SUBAKO_JSON({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]})},
  {.name = "post", .description = "POST JSON.", .handler = post,
   .input_schema = SUBAKO_JSON({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]})},
  {.name = "download", .description = "GET into a file.", .handler = download,
   .input_schema = SUBAKO_JSON({"type": "object", "properties": {"url": {"type": "string"}, "file": {"type": "string"}},
                                "required": ["url", "file"]})},
  {.name = "progress", .description = "Progress.", .handler = progress, .title = "Progress reporter",
   .annotations = SUBAKO_JSON({"readOnlyHint": true, "openWorldHint": false})},
  {.name = "kinds", .description = "The HTTP error kinds.", .handler = kinds},
  {.name = "roundtrip", .description = "Any JSON value back.", .handler = roundtrip},
};

int main(void) { return subako_serve(TOOLS, SUBAKO_COUNT(TOOLS)); }
