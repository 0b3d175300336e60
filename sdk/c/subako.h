/*
 * subako.h — write a subako function package (ABI 1) in C. One header, stb-style:
 *
 *     #define SUBAKO_IMPLEMENTATION   // in exactly one .c file of the package
 *     #include "subako.h"
 *
 *     static void greet(subako_call *call) {
 *       const char *name = subako_arg_string(call, "name");   // missing or not a string: the model is told
 *       if (!subako_args_ok(call)) return;
 *       subako_json *out = subako_json_object();
 *       subako_json_set_string(out, "message", subako_format("Hello, %s!", name));
 *       subako_structured(call, out);                          // structuredContent + its JSON as text
 *     }
 *
 *     static const subako_tool TOOLS[] = {
 *       { .name = "greet", .description = "Greet someone by name.", .handler = greet,
 *         .input_schema = SUBAKO_JSON({"type": "object", "properties": {"name": {"type": "string"}},
 *                                      "required": ["name"]}) },
 *     };
 *
 *     int main(void) { return subako_serve(TOOLS, SUBAKO_COUNT(TOOLS)); }
 *
 * Build: clang --target=wasm32-wasi -O2 -s -I<this folder> -o module.wasm <the .c files under src/>
 * (Debian: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32). `subako build` does it for you.
 *
 * What it does for you, as the ABI says (docs/abi.md):
 * - the stdin line loop: one JSON-RPC request per line, one compact answer line per request, flushed; exit 0
 *   at end of file; notifications (no `id`) ignored; stdout is never written but for answers (log to stderr);
 * - `server/discover`; `tools/list` paged (SUBAKO_TOOLS_PAGE_SIZE tools a page, an opaque `cursor`);
 *   `tools/call` with `_meta` read as the spec says: a `protocolVersion` other than 2026-07-28 answers
 *   UnsupportedProtocolVersion (-32022), a `progressToken` lets the tool send progress (subako_progress);
 * - typed argument access: a missing or mistyped argument makes the answer an `isError` result naming it,
 *   whatever the handler went on to build;
 * - results: text, structured content, images (base64), `resource_link`s to volume files, `isError`; an
 *   unknown tool is an `isError` result too (a JSON-RPC error would be a crash of the call);
 * - `subako_http`: the request JSON built for you, the answer read into a struct with the error kinds as an
 *   enum, bodies inline, as JSON, or streamed to a file under /volume;
 * - files under /volume: write (parents created), read, and their `volume:///` URIs.
 *
 * Memory: everything the SDK hands out during a call (argument strings, JSON values you build, HTTP answers,
 * subako_format strings) lives in the call's arena and is freed after the answer is written. Copy what must
 * outlive a call (nothing should: each call is a fresh instance).
 *
 * Why our own JSON reader and writer: the C JSON libraries Debian ships (cJSON, json-c, jansson, yajl,
 * json-parser) come as host (x86-64) shared libraries with headers, not as sources a wasm32-wasi build can
 * compile; npm has no C JSON library. The one header-only package, jsmn (libjsmn-dev 1.1.0, 2020), would be
 * found (clang's wasm32 search path ends in /usr/include), but it is a tokenizer only: no string unescaping,
 * no numbers, no lookup and no writer — the parts a guest needs — lax unless built with JSMN_STRICT, and it
 * wants a token count up front; it would also be one more package for every author to install. So this
 * file carries a small, strict reader (RFC 8259; \u escapes with surrogate pairs to UTF-8; a depth limit,
 * since it recurses) and a compact writer, both tested by the guests in test/sdk.
 *
 * Licence: Apache-2.0, like subako.
 */
#ifndef SUBAKO_H
#define SUBAKO_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The one protocol revision ABI 1 speaks. */
#define SUBAKO_PROTOCOL_VERSION "2026-07-28"

/* Tools per `tools/list` page. The ABI allows 16 pages and 64 tools, so a page holds at least 4. */
#ifndef SUBAKO_TOOLS_PAGE_SIZE
#define SUBAKO_TOOLS_PAGE_SIZE 16
#endif

/* Nesting deeper than this in any JSON the SDK reads is refused (it parses recursively). */
#ifndef SUBAKO_JSON_MAX_DEPTH
#define SUBAKO_JSON_MAX_DEPTH 128
#endif

/* A JSON literal written as C tokens: SUBAKO_JSON({"type": "object"}) is the string "{\"type\": \"object\"}". */
#define SUBAKO_JSON(...) #__VA_ARGS__
#define SUBAKO_COUNT(array) (sizeof(array) / sizeof((array)[0]))

#if defined(__GNUC__) || defined(__clang__)
#define SUBAKO_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define SUBAKO_PRINTF(fmt, args)
#endif

/* ------------------------------------------------------------------------------------------------ JSON */

typedef enum {
  SUBAKO_JSON_NULL,
  SUBAKO_JSON_BOOL,
  SUBAKO_JSON_NUMBER,
  SUBAKO_JSON_STRING,
  SUBAKO_JSON_ARRAY,
  SUBAKO_JSON_OBJECT
} subako_json_type;

typedef struct subako_json subako_json;
struct subako_json {
  subako_json_type type;
  int boolean;
  double number;
  /* A number as it was read, re-written as is (integers beyond 2^53 stay exact); NULL for built numbers. */
  const char *number_text;
  /* A string: NUL-terminated UTF-8; `length` counts bytes (a \u0000 inside is kept). */
  const char *string;
  size_t length;
  /* Arrays and objects: children in order, `count` of them; an object's children carry their `key`. */
  subako_json *first, *last;
  size_t count;
  /* As a child: the next sibling and, in an object, its key. */
  subako_json *next;
  const char *key;
  size_t key_length;
  /* private: set once the value is some array's or object's child */
  int has_parent;
};

/* Parses `length` bytes of JSON text; NULL when it is not JSON (then *error, if given, says why). */
subako_json *subako_json_parse(const char *text, size_t length, const char **error);
/* The member `key` of an object, or NULL (also when `object` is NULL or not an object). */
const subako_json *subako_json_get(const subako_json *object, const char *key);
/* Element `index` of an array, or NULL. */
const subako_json *subako_json_at(const subako_json *array, size_t index);
/* The string, or NULL when `value` is not a string. */
const char *subako_json_string_of(const subako_json *value);
/* Builders. Values live in the current call's arena. `set` replaces a member of the same key. A value that
 * already has a parent (a member of the arguments, say) goes in as a copy sharing its children, so reading
 * values from a request and putting them in an answer never relinks the request. */
subako_json *subako_json_null(void);
subako_json *subako_json_bool(int value);
subako_json *subako_json_number(double value);
subako_json *subako_json_int(long long value);
subako_json *subako_json_string(const char *value);
subako_json *subako_json_stringn(const char *value, size_t length);
subako_json *subako_json_array(void);
subako_json *subako_json_object(void);
subako_json *subako_json_push(subako_json *array, subako_json *value);
subako_json *subako_json_set(subako_json *object, const char *key, subako_json *value);
subako_json *subako_json_set_string(subako_json *object, const char *key, const char *value);
subako_json *subako_json_set_number(subako_json *object, const char *key, double value);
subako_json *subako_json_set_int(subako_json *object, const char *key, long long value);
subako_json *subako_json_set_bool(subako_json *object, const char *key, int value);
/* Compact JSON text of `value` (NaN and infinities are written as null). */
char *subako_json_stringify(const subako_json *value);

/* ----------------------------------------------------------------------------------------- memory, text */

/* `size` bytes from the current call's arena (zeroed), freed after the answer. */
void *subako_alloc(size_t size);
/* printf into the call's arena. */
char *subako_format(const char *format, ...) SUBAKO_PRINTF(1, 2);
char *subako_vformat(const char *format, va_list args);
/* Standard base64 (with padding) of `length` bytes, in the call's arena. */
char *subako_base64(const void *data, size_t length);

/* A growable byte buffer (malloc'd; the SDK's writer uses it, and so may you). */
typedef struct {
  char *data;
  size_t length, capacity;
} subako_buf;
void subako_buf_append(subako_buf *buf, const void *bytes, size_t length);
void subako_buf_puts(subako_buf *buf, const char *text);
void subako_buf_printf(subako_buf *buf, const char *format, ...) SUBAKO_PRINTF(2, 3);
void subako_buf_json(subako_buf *buf, const subako_json *value);
void subako_buf_json_string(subako_buf *buf, const char *text, size_t length);
void subako_buf_free(subako_buf *buf);

/* ----------------------------------------------------------------------------------------------- tools */

typedef struct subako_call subako_call;
typedef void (*subako_handler)(subako_call *call);

typedef struct {
  /* 1 to 64 of a-z, 0-9, _ and -. */
  const char *name;
  /* What the model reads to choose the tool: up to 1,024 characters. */
  const char *description;
  /* A JSON Schema with "type": "object" at the top (write it with SUBAKO_JSON(...)). */
  const char *input_schema;
  subako_handler handler;
  /* Optional: the schema of structured content, shown to people. */
  const char *output_schema;
  /* Optional: a title for people. */
  const char *title;
  /* Optional: MCP tool annotations, a JSON object (SUBAKO_JSON({"readOnlyHint": true})). */
  const char *annotations;
} subako_tool;

/* The request loop: answers every request on stdin until end of file; returns main's exit status. */
int subako_serve(const subako_tool *tools, size_t count);

/* What a handler is given. Read the fields; change them only through the functions below. */
struct subako_call {
  const subako_tool *tool;
  /* The `arguments` object (an empty object when the request had none). */
  const subako_json *arguments;
  /* The request's `params._meta`, or NULL. */
  const subako_json *meta;
  /* `_meta.progressToken`, or NULL when the caller wants no progress. */
  const subako_json *progress_token;
  /* private */
  subako_json *content;
  subako_json *structured;
  int is_error;
  char *argument_problem;
};

/* Arguments. A required accessor whose argument is missing or of another type records the problem
 * (the answer becomes an isError result naming the argument) and returns NULL / 0 / 0.0. An `_or`
 * accessor returns `fallback` when the argument is absent, and records a problem when it has another type.
 * JSON null counts as a value of the wrong type, as a JSON Schema without "null" would say. */
const char *subako_arg_string(subako_call *call, const char *key);
const char *subako_arg_string_or(subako_call *call, const char *key, const char *fallback);
double subako_arg_number(subako_call *call, const char *key);
double subako_arg_number_or(subako_call *call, const char *key, double fallback);
/* An integer: a number with no fractional part within +-2^53. */
long long subako_arg_int(subako_call *call, const char *key);
long long subako_arg_int_or(subako_call *call, const char *key, long long fallback);
int subako_arg_bool(subako_call *call, const char *key);
int subako_arg_bool_or(subako_call *call, const char *key, int fallback);
const subako_json *subako_arg_array(subako_call *call, const char *key);
const subako_json *subako_arg_object(subako_call *call, const char *key);
/* The argument as it is, or NULL when absent (never a problem). */
const subako_json *subako_arg_value(subako_call *call, const char *key);
/* Records a problem with an argument yourself ("must not be empty"); the first problem recorded wins. */
void subako_arg_problem(subako_call *call, const char *key, const char *format, ...) SUBAKO_PRINTF(3, 4);
/* True while no argument problem has been recorded. */
int subako_args_ok(const subako_call *call);

/* Results, in the order the blocks should appear. */
void subako_text(subako_call *call, const char *text);
void subako_textf(subako_call *call, const char *format, ...) SUBAKO_PRINTF(2, 3);
/* structuredContent (an object); when no text block was added, its JSON is also the text the model reads. */
void subako_structured(subako_call *call, subako_json *object);
/* An image block: `data` base64-encoded; mime_type image/png, image/jpeg, image/gif or image/webp. The
 * answer counts against stdout's 1 MiB per call: for a large image write a file and use subako_link_file. */
void subako_image(subako_call *call, const char *mime_type, const void *data, size_t length);
/* A resource_link block. `mime_type` may be NULL. */
void subako_link(subako_call *call, const char *uri, const char *name, const char *mime_type);
/* A resource_link to a file under /volume (an image there is shown to the model); -1 when the path is not. */
int subako_link_file(subako_call *call, const char *path, const char *mime_type);
/* A failure the model should read: a text block, and isError. */
void subako_error(subako_call *call, const char *format, ...) SUBAKO_PRINTF(2, 3);
/* Marks the result isError without adding a block. */
void subako_set_error(subako_call *call);
/* notifications/progress for this call, when the caller gave a progressToken (else nothing). total < 0: unknown. */
void subako_progress(subako_call *call, double done, double total, const char *message);

/* ------------------------------------------------------------------------------------------ subako_http */

typedef enum {
  SUBAKO_HTTP_OK = 0,
  SUBAKO_HTTP_INVALID_REQUEST,
  SUBAKO_HTTP_HOST_NOT_ALLOWED,
  SUBAKO_HTTP_FORBIDDEN_DESTINATION,
  SUBAKO_HTTP_CREDENTIAL_HEADER,
  SUBAKO_HTTP_CREDENTIAL_UNAVAILABLE,
  SUBAKO_HTTP_TOO_MANY_REDIRECTS,
  SUBAKO_HTTP_TIMEOUT,
  SUBAKO_HTTP_TOO_LARGE,
  SUBAKO_HTTP_NOT_TEXT,
  SUBAKO_HTTP_WRITE_BUDGET,
  SUBAKO_HTTP_BAD_PATH,
  SUBAKO_HTTP_CONNECTION,
  /* The host said `abi`, or an import returned a negative misuse code, or the answer did not parse. */
  SUBAKO_HTTP_ABI,
  /* A kind this SDK does not know yet (`error_kind` holds its name). */
  SUBAKO_HTTP_OTHER
} subako_http_error;

typedef struct {
  /* GET (the default when NULL), HEAD, POST, PUT, PATCH, DELETE or OPTIONS. */
  const char *method;
  /* Required; https only. */
  const char *url;
  /* Name, value, name, value, ..., NULL. Lowercase names. */
  const char *const *headers;
  /* At most one body: text (sent as text/plain unless a header says otherwise), JSON, or a volume file. */
  const char *body_text;
  const subako_json *body_json;
  const char *body_file;
  /* Save the response body to this volume file instead of reading it inline (overwritten, parents made). */
  const char *output_file;
  /* 0: follow redirects (the default, up to 10 hops); 1: do not. */
  int no_redirects;
  /* 0: no bound of its own (the call's deadline still applies). */
  int timeout_ms;
} subako_http_request;

typedef struct {
  /* SUBAKO_HTTP_OK when the server answered (any status); else the kind, its name and the host's message. */
  subako_http_error error;
  const char *error_kind;
  const char *error_message;
  int status;
  /* Response headers: an object of lowercase names to strings. */
  const subako_json *headers;
  /* An inline body: NUL-terminated UTF-8 text of `body_length` bytes (NULL for a file body). */
  const char *body;
  size_t body_length;
  /* A file body: where it was saved and how many bytes. */
  const char *body_file;
  long long body_file_bytes;
} subako_http_response;

/* Sends the request through subako_http and reads the answer (in the call's arena). */
subako_http_response subako_http(const subako_http_request *request);
/* A GET of `url`. */
subako_http_response subako_http_get(const char *url);
/* A response header (lowercase name), or NULL. */
const char *subako_http_header(const subako_http_response *response, const char *name);
/* The inline body parsed as JSON, or NULL when there is none or it is not JSON. */
const subako_json *subako_http_json(const subako_http_response *response);
/* The error kind's name as the ABI spells it ("host_not_allowed"); "ok" for SUBAKO_HTTP_OK. */
const char *subako_http_error_name(subako_http_error error);

/* ------------------------------------------------------------------------------------- files, /volume */

/* Writes a file, creating its parent directories; 0, or an errno value (EDQUOT past the write budget). */
int subako_write_file(const char *path, const void *data, size_t length);
/* Reads a whole file into the call's arena (NUL-terminated); NULL when it cannot be read. */
char *subako_read_file(const char *path, size_t *length);
/* Creates a directory and its parents; 0, or an errno value. */
int subako_make_dirs(const char *path);
/* `volume:///tmp/a%20b.png` for `/volume/tmp/a b.png` (each segment percent-encoded); NULL outside /volume. */
char *subako_volume_uri(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* SUBAKO_H */

/* ======================================================================================= implementation */

#ifdef SUBAKO_IMPLEMENTATION
#ifndef SUBAKO_IMPLEMENTATION_DONE
#define SUBAKO_IMPLEMENTATION_DONE

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- arena: every allocation of one request, freed at once after its answer ---------------------------- */

typedef struct subako__block {
  struct subako__block *next;
  size_t used, size;
  _Alignas(16) unsigned char data[];
} subako__block;

typedef struct {
  subako__block *head;
} subako__arena;

static subako__arena subako__tools_arena;   /* the tools' parsed schemas: live for the whole run */
static subako__arena subako__request_arena; /* one request's values */
static subako__arena *subako__arena_now = &subako__request_arena;

static void *subako__xmalloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) {
    fputs("subako: out of memory\n", stderr);
    exit(70);
  }
  return p;
}

static void *subako__arena_alloc(subako__arena *arena, size_t size) {
  size = (size + 15) & ~(size_t)15;
  subako__block *b = arena->head;
  if (!b || b->size - b->used < size) {
    size_t block = size > 60000 ? size : 65536 - sizeof(subako__block);
    b = (subako__block *)subako__xmalloc(sizeof(subako__block) + block);
    b->next = arena->head;
    b->used = 0;
    b->size = block;
    arena->head = b;
  }
  void *p = b->data + b->used;
  b->used += size;
  memset(p, 0, size);
  return p;
}

static void subako__arena_free(subako__arena *arena) {
  while (arena->head) {
    subako__block *next = arena->head->next;
    free(arena->head);
    arena->head = next;
  }
}

void *subako_alloc(size_t size) { return subako__arena_alloc(subako__arena_now, size); }

static char *subako__strndup(const char *s, size_t n) {
  char *out = (char *)subako_alloc(n + 1);
  memcpy(out, s, n);
  out[n] = 0;
  return out;
}

char *subako_vformat(const char *format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int n = vsnprintf(NULL, 0, format, copy);
  va_end(copy);
  if (n < 0) n = 0;
  char *out = (char *)subako_alloc((size_t)n + 1);
  vsnprintf(out, (size_t)n + 1, format, args);
  return out;
}

char *subako_format(const char *format, ...) {
  va_list args;
  va_start(args, format);
  char *out = subako_vformat(format, args);
  va_end(args);
  return out;
}

char *subako_base64(const void *data, size_t length) {
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const unsigned char *in = (const unsigned char *)data;
  char *out = (char *)subako_alloc((length + 2) / 3 * 4 + 1), *o = out;
  size_t i = 0;
  for (; i + 2 < length; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
    *o++ = alphabet[v >> 18 & 63];
    *o++ = alphabet[v >> 12 & 63];
    *o++ = alphabet[v >> 6 & 63];
    *o++ = alphabet[v & 63];
  }
  if (i < length) {
    uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < length ? (uint32_t)in[i + 1] << 8 : 0);
    *o++ = alphabet[v >> 18 & 63];
    *o++ = alphabet[v >> 12 & 63];
    *o++ = i + 1 < length ? alphabet[v >> 6 & 63] : '=';
    *o++ = '=';
  }
  *o = 0;
  return out;
}

/* --- buffer ---------------------------------------------------------------------------------------- */

void subako_buf_append(subako_buf *buf, const void *bytes, size_t length) {
  if (buf->capacity - buf->length < length + 1) {
    size_t capacity = buf->capacity ? buf->capacity : 256;
    while (capacity - buf->length < length + 1) capacity *= 2;
    char *data = (char *)realloc(buf->data, capacity);
    if (!data) {
      fputs("subako: out of memory\n", stderr);
      exit(70);
    }
    buf->data = data;
    buf->capacity = capacity;
  }
  memcpy(buf->data + buf->length, bytes, length);
  buf->length += length;
  buf->data[buf->length] = 0;
}

void subako_buf_puts(subako_buf *buf, const char *text) { subako_buf_append(buf, text, strlen(text)); }

void subako_buf_printf(subako_buf *buf, const char *format, ...) {
  va_list args;
  va_start(args, format);
  char *text = subako_vformat(format, args);
  va_end(args);
  subako_buf_puts(buf, text);
}

void subako_buf_free(subako_buf *buf) {
  free(buf->data);
  buf->data = NULL;
  buf->length = buf->capacity = 0;
}

void subako_buf_json_string(subako_buf *buf, const char *text, size_t length) {
  static const char hex[] = "0123456789abcdef";
  subako_buf_append(buf, "\"", 1);
  size_t run = 0; /* bytes copied as they are, appended in one go */
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    subako_buf_append(buf, text + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': subako_buf_append(buf, "\\\"", 2); break;
      case '\\': subako_buf_append(buf, "\\\\", 2); break;
      case '\n': subako_buf_append(buf, "\\n", 2); break;
      case '\r': subako_buf_append(buf, "\\r", 2); break;
      case '\t': subako_buf_append(buf, "\\t", 2); break;
      default: {
        char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
        subako_buf_append(buf, esc, 6);
      }
    }
  }
  subako_buf_append(buf, text + run, length - run);
  subako_buf_append(buf, "\"", 1);
}

static void subako__buf_number(subako_buf *buf, double d) {
  char text[32];
  if (isnan(d) || isinf(d)) {
    subako_buf_puts(buf, "null");
    return;
  }
  if (d == floor(d) && fabs(d) < 9007199254740992.0) {
    snprintf(text, sizeof text, "%lld", (long long)d);
  } else {
    /* The shortest of %.15g..%.17g that reads back the same double. */
    for (int precision = 15; precision <= 17; precision++) {
      snprintf(text, sizeof text, "%.*g", precision, d);
      if (strtod(text, NULL) == d) break;
    }
  }
  subako_buf_puts(buf, text);
}

void subako_buf_json(subako_buf *buf, const subako_json *v) {
  if (!v) {
    subako_buf_puts(buf, "null");
    return;
  }
  switch (v->type) {
    case SUBAKO_JSON_NULL: subako_buf_puts(buf, "null"); break;
    case SUBAKO_JSON_BOOL: subako_buf_puts(buf, v->boolean ? "true" : "false"); break;
    case SUBAKO_JSON_NUMBER:
      if (v->number_text) subako_buf_puts(buf, v->number_text);
      else subako__buf_number(buf, v->number);
      break;
    case SUBAKO_JSON_STRING: subako_buf_json_string(buf, v->string, v->length); break;
    case SUBAKO_JSON_ARRAY:
    case SUBAKO_JSON_OBJECT: {
      int object = v->type == SUBAKO_JSON_OBJECT;
      subako_buf_append(buf, object ? "{" : "[", 1);
      for (const subako_json *child = v->first; child; child = child->next) {
        if (child != v->first) subako_buf_append(buf, ",", 1);
        if (object) {
          subako_buf_json_string(buf, child->key, child->key_length);
          subako_buf_append(buf, ":", 1);
        }
        subako_buf_json(buf, child);
      }
      subako_buf_append(buf, object ? "}" : "]", 1);
      break;
    }
  }
}

char *subako_json_stringify(const subako_json *value) {
  subako_buf buf = {0};
  subako_buf_json(&buf, value);
  char *out = subako__strndup(buf.data ? buf.data : "", buf.length);
  subako_buf_free(&buf);
  return out;
}

/* --- JSON reader ------------------------------------------------------------------------------------- */

typedef struct {
  const char *p, *end, *start;
  const char *error;
  /* Reading a request: a value nested past the limit is stepped over (as null) and counted, not refused, so
   * the request's id is still read and the tool can be answered with a tool error instead of no answer. */
  int step_over_deep;
  int stepped_over;
} subako__reader;

static subako_json *subako__new(subako_json_type type) {
  subako_json *v = (subako_json *)subako_alloc(sizeof(subako_json));
  v->type = type;
  return v;
}

static void subako__ws(subako__reader *r) {
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) r->p++;
}

static int subako__fail(subako__reader *r, const char *why) {
  if (!r->error) r->error = subako_format("%s at byte %ld", why, (long)(r->p - r->start));
  return 0;
}

static int subako__hex4(const char *p, unsigned *out) {
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    v <<= 4;
    if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
    else return 0;
  }
  *out = v;
  return 1;
}

static size_t subako__utf8(unsigned cp, char *out) {
  if (cp < 0x80) { out[0] = (char)cp; return 1; }
  if (cp < 0x800) { out[0] = (char)(0xC0 | cp >> 6); out[1] = (char)(0x80 | (cp & 63)); return 2; }
  if (cp < 0x10000) {
    out[0] = (char)(0xE0 | cp >> 12); out[1] = (char)(0x80 | (cp >> 6 & 63)); out[2] = (char)(0x80 | (cp & 63));
    return 3;
  }
  out[0] = (char)(0xF0 | cp >> 18); out[1] = (char)(0x80 | (cp >> 12 & 63));
  out[2] = (char)(0x80 | (cp >> 6 & 63)); out[3] = (char)(0x80 | (cp & 63));
  return 4;
}

/* Reads a string at r->p (on its opening quote) into a new arena copy, escapes resolved. */
static int subako__string(subako__reader *r, const char **out, size_t *out_length) {
  const char *p = ++r->p;
  size_t escapes = 0;
  while (p < r->end && *p != '"') {
    if ((unsigned char)*p < 0x20) { r->p = p; return subako__fail(r, "a control character inside a string"); }
    if (*p == '\\') { p++; escapes++; }
    p++;
  }
  if (p >= r->end) { r->p = p; return subako__fail(r, "an unterminated string"); }
  size_t raw = (size_t)(p - r->p);
  /* Escapes never grow: \uXXXX (6 bytes) is at most 3 bytes of UTF-8, a surrogate pair (12) 4. */
  char *s = (char *)subako_alloc(raw + 1), *o = s;
  if (!escapes) {
    memcpy(s, r->p, raw);
    o = s + raw;
  } else {
    for (const char *q = r->p; q < p; q++) {
      if (*q != '\\') { *o++ = *q; continue; }
      q++;
      switch (*q) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
          unsigned cp, low;
          if (p - q < 5 || !subako__hex4(q + 1, &cp)) { r->p = q; return subako__fail(r, "a bad \\u escape"); }
          q += 4;
          if (cp >= 0xD800 && cp <= 0xDBFF && p - q >= 7 && q[1] == '\\' && q[2] == 'u' && subako__hex4(q + 3, &low) &&
              low >= 0xDC00 && low <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            q += 6;
          } else if (cp >= 0xD800 && cp <= 0xDFFF) {
            cp = 0xFFFD; /* a lone surrogate has no UTF-8 form */
          }
          o += subako__utf8(cp, o);
          break;
        }
        default: r->p = q; return subako__fail(r, "a bad escape");
      }
    }
  }
  *o = 0;
  *out = s;
  *out_length = (size_t)(o - s);
  r->p = p + 1;
  return 1;
}

static int subako__literal(subako__reader *r, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0) return subako__fail(r, "an unexpected character");
  r->p += n;
  return 1;
}

static subako_json *subako__value(subako__reader *r, int depth);

static subako_json *subako__number(subako__reader *r) {
  const char *s = r->p, *p = s;
  if (p < r->end && *p == '-') p++;
  if (p < r->end && *p == '0') p++;
  else if (p < r->end && *p >= '1' && *p <= '9') while (p < r->end && *p >= '0' && *p <= '9') p++;
  else { subako__fail(r, "an unexpected character"); return NULL; }
  if (p < r->end && *p == '.') {
    p++;
    if (p >= r->end || *p < '0' || *p > '9') { r->p = p; subako__fail(r, "a bad number"); return NULL; }
    while (p < r->end && *p >= '0' && *p <= '9') p++;
  }
  if (p < r->end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < r->end && (*p == '+' || *p == '-')) p++;
    if (p >= r->end || *p < '0' || *p > '9') { r->p = p; subako__fail(r, "a bad number"); return NULL; }
    while (p < r->end && *p >= '0' && *p <= '9') p++;
  }
  subako_json *v = subako__new(SUBAKO_JSON_NUMBER);
  v->number_text = subako__strndup(s, (size_t)(p - s));
  v->number = strtod(v->number_text, NULL);
  r->p = p;
  return v;
}

/* Steps over one value without recursing (brackets counted, strings skipped whole); it becomes a null. */
static subako_json *subako__step_over(subako__reader *r) {
  long open = 0;
  do {
    if (r->p >= r->end) { subako__fail(r, "the text ends early"); return NULL; }
    char c = *r->p;
    if (c == '"') {
      for (r->p++; r->p < r->end && *r->p != '"'; r->p++)
        if (*r->p == '\\') r->p++;
      if (r->p >= r->end) { subako__fail(r, "an unterminated string"); return NULL; }
    } else if (c == '[' || c == '{') {
      open++;
    } else if (c == ']' || c == '}') {
      if (--open < 0) { subako__fail(r, "an unexpected character"); return NULL; }
    }
    r->p++;
  } while (open > 0);
  r->stepped_over++;
  return subako__new(SUBAKO_JSON_NULL);
}

static subako_json *subako__value(subako__reader *r, int depth) {
  subako__ws(r);
  if (r->p >= r->end) { subako__fail(r, "the text ends early"); return NULL; }
  if (depth > SUBAKO_JSON_MAX_DEPTH) {
    if (!r->step_over_deep) { subako__fail(r, "nesting too deep"); return NULL; }
    return subako__step_over(r);
  }
  char c = *r->p;
  if (c == '{' || c == '[') {
    int object = c == '{';
    subako_json *v = subako__new(object ? SUBAKO_JSON_OBJECT : SUBAKO_JSON_ARRAY);
    r->p++;
    subako__ws(r);
    if (r->p < r->end && *r->p == (object ? '}' : ']')) { r->p++; return v; }
    for (;;) {
      const char *key = NULL;
      size_t key_length = 0;
      if (object) {
        subako__ws(r);
        if (r->p >= r->end || *r->p != '"') { subako__fail(r, "an object key that is not a string"); return NULL; }
        if (!subako__string(r, &key, &key_length)) return NULL;
        subako__ws(r);
        if (r->p >= r->end || *r->p != ':') { subako__fail(r, "a missing ':'"); return NULL; }
        r->p++;
      }
      subako_json *child = subako__value(r, depth + 1);
      if (!child) return NULL;
      child->key = key;
      child->key_length = key_length;
      child->has_parent = 1;
      if (v->last) v->last->next = child;
      else v->first = child;
      v->last = child;
      v->count++;
      subako__ws(r);
      if (r->p < r->end && *r->p == ',') { r->p++; continue; }
      if (r->p < r->end && *r->p == (object ? '}' : ']')) { r->p++; return v; }
      subako__fail(r, object ? "a missing ',' or '}'" : "a missing ',' or ']'");
      return NULL;
    }
  }
  if (c == '"') {
    subako_json *v = subako__new(SUBAKO_JSON_STRING);
    return subako__string(r, &v->string, &v->length) ? v : NULL;
  }
  if (c == 't' || c == 'f') {
    subako_json *v = subako__new(SUBAKO_JSON_BOOL);
    v->boolean = c == 't';
    return subako__literal(r, c == 't' ? "true" : "false") ? v : NULL;
  }
  if (c == 'n') return subako__literal(r, "null") ? subako__new(SUBAKO_JSON_NULL) : NULL;
  return subako__number(r);
}

static subako_json *subako__parse(const char *text, size_t length, const char **error, int step_over_deep, int *stepped_over) {
  subako__reader r = {text, text + length, text, NULL, step_over_deep, 0};
  subako_json *v = subako__value(&r, 0);
  if (v) {
    subako__ws(&r);
    if (r.p != r.end) {
      subako__fail(&r, "text after the value");
      v = NULL;
    }
  }
  if (error) *error = r.error;
  if (stepped_over) *stepped_over = r.stepped_over;
  return v;
}

subako_json *subako_json_parse(const char *text, size_t length, const char **error) {
  return subako__parse(text, length, error, 0, NULL);
}

const subako_json *subako_json_get(const subako_json *object, const char *key) {
  if (!object || object->type != SUBAKO_JSON_OBJECT) return NULL;
  const subako_json *found = NULL;
  /* The last of repeated keys wins, as in JavaScript's JSON.parse. */
  for (const subako_json *c = object->first; c; c = c->next)
    if (strcmp(c->key, key) == 0) found = c;
  return found;
}

const subako_json *subako_json_at(const subako_json *array, size_t index) {
  if (!array || array->type != SUBAKO_JSON_ARRAY) return NULL;
  const subako_json *c = array->first;
  while (c && index--) c = c->next;
  return c;
}

const char *subako_json_string_of(const subako_json *value) {
  return value && value->type == SUBAKO_JSON_STRING ? value->string : NULL;
}

/* --- JSON builders ----------------------------------------------------------------------------------- */

subako_json *subako_json_null(void) { return subako__new(SUBAKO_JSON_NULL); }
subako_json *subako_json_bool(int value) {
  subako_json *v = subako__new(SUBAKO_JSON_BOOL);
  v->boolean = value != 0;
  return v;
}
subako_json *subako_json_number(double value) {
  subako_json *v = subako__new(SUBAKO_JSON_NUMBER);
  v->number = value;
  return v;
}
subako_json *subako_json_int(long long value) {
  subako_json *v = subako__new(SUBAKO_JSON_NUMBER);
  v->number = (double)value;
  v->number_text = subako_format("%lld", value);
  return v;
}
subako_json *subako_json_stringn(const char *value, size_t length) {
  subako_json *v = subako__new(SUBAKO_JSON_STRING);
  v->string = subako__strndup(value ? value : "", value ? length : 0);
  v->length = value ? length : 0;
  return v;
}
subako_json *subako_json_string(const char *value) { return subako_json_stringn(value, value ? strlen(value) : 0); }
subako_json *subako_json_array(void) { return subako__new(SUBAKO_JSON_ARRAY); }
subako_json *subako_json_object(void) { return subako__new(SUBAKO_JSON_OBJECT); }

/* A new node sharing `v`'s children: linking a value into a second parent rewrites its `next` and `key`, so a
 * value that already has a parent (a tool built once, a request's token, a caller's body) goes in as a copy. */
static subako_json *subako__shallow(const subako_json *v) {
  subako_json *copy = subako__new(v->type);
  *copy = *v;
  copy->next = NULL;
  copy->key = NULL;
  copy->key_length = 0;
  copy->has_parent = 0;
  return copy;
}

/* Links `value` as the last child of `parent`; a value that has a parent already is copied first. */
static subako_json *subako__adopt(subako_json *parent, subako_json *value, const char *key) {
  if (value->has_parent) value = subako__shallow(value);
  value->next = NULL;
  value->key = key;
  value->key_length = key ? strlen(key) : 0;
  value->has_parent = 1;
  if (parent->last) parent->last->next = value;
  else parent->first = value;
  parent->last = value;
  parent->count++;
  return value;
}

subako_json *subako_json_push(subako_json *array, subako_json *value) {
  if (!array || !value) return array;
  subako__adopt(array, value, NULL);
  return array;
}

subako_json *subako_json_set(subako_json *object, const char *key, subako_json *value) {
  if (!object || object->type != SUBAKO_JSON_OBJECT || !key || !value) return object;
  if (value->has_parent) value = subako__shallow(value);
  const char *own_key = subako__strndup(key, strlen(key));
  subako_json *prev = NULL;
  for (subako_json *c = object->first; c; prev = c, c = c->next) {
    if (strcmp(c->key, key) != 0) continue;
    value->key = own_key;
    value->key_length = strlen(own_key);
    value->next = c->next;
    value->has_parent = 1;
    if (prev) prev->next = value;
    else object->first = value;
    if (object->last == c) object->last = value;
    return object;
  }
  subako__adopt(object, value, own_key);
  return object;
}

subako_json *subako_json_set_string(subako_json *o, const char *k, const char *v) { return subako_json_set(o, k, subako_json_string(v)); }
subako_json *subako_json_set_number(subako_json *o, const char *k, double v) { return subako_json_set(o, k, subako_json_number(v)); }
subako_json *subako_json_set_int(subako_json *o, const char *k, long long v) { return subako_json_set(o, k, subako_json_int(v)); }
subako_json *subako_json_set_bool(subako_json *o, const char *k, int v) { return subako_json_set(o, k, subako_json_bool(v)); }

/* --- arguments --------------------------------------------------------------------------------------- */

static const char *subako__type_name(const subako_json *v) {
  switch (v->type) {
    case SUBAKO_JSON_NULL: return "null";
    case SUBAKO_JSON_BOOL: return "a boolean";
    case SUBAKO_JSON_NUMBER: return v->number == floor(v->number) ? "an integer" : "a number";
    case SUBAKO_JSON_STRING: return "a string";
    case SUBAKO_JSON_ARRAY: return "an array";
    default: return "an object";
  }
}

void subako_arg_problem(subako_call *call, const char *key, const char *format, ...) {
  if (call->argument_problem) return;
  va_list args;
  va_start(args, format);
  char *what = subako_vformat(format, args);
  va_end(args);
  call->argument_problem = subako_format("argument \"%s\" %s", key, what);
}

int subako_args_ok(const subako_call *call) { return call->argument_problem == NULL; }

const subako_json *subako_arg_value(subako_call *call, const char *key) { return subako_json_get(call->arguments, key); }

/* The argument when it has `type`; else records "is missing" (required) or "must be" and returns NULL. */
static const subako_json *subako__arg(subako_call *call, const char *key, subako_json_type type, const char *expected, int required) {
  const subako_json *v = subako_json_get(call->arguments, key);
  if (!v) {
    if (required) subako_arg_problem(call, key, "is missing: expected %s", expected);
    return NULL;
  }
  if (v->type != type) {
    subako_arg_problem(call, key, "must be %s, not %s", expected, subako__type_name(v));
    return NULL;
  }
  return v;
}

const char *subako_arg_string(subako_call *call, const char *key) {
  const subako_json *v = subako__arg(call, key, SUBAKO_JSON_STRING, "a string", 1);
  return v ? v->string : NULL;
}
const char *subako_arg_string_or(subako_call *call, const char *key, const char *fallback) {
  const subako_json *v = subako__arg(call, key, SUBAKO_JSON_STRING, "a string", 0);
  return v ? v->string : fallback;
}
double subako_arg_number(subako_call *call, const char *key) {
  const subako_json *v = subako__arg(call, key, SUBAKO_JSON_NUMBER, "a number", 1);
  return v ? v->number : 0.0;
}
double subako_arg_number_or(subako_call *call, const char *key, double fallback) {
  const subako_json *v = subako__arg(call, key, SUBAKO_JSON_NUMBER, "a number", 0);
  return v ? v->number : subako_json_get(call->arguments, key) ? 0.0 : fallback;
}
static long long subako__int(subako_call *call, const char *key, int required, long long fallback) {
  const subako_json *v = subako__arg(call, key, SUBAKO_JSON_NUMBER, "an integer", required);
  if (!v) return subako_json_get(call->arguments, key) || required ? 0 : fallback;
  if (v->number != floor(v->number) || fabs(v->number) > 9007199254740991.0) {
    subako_arg_problem(call, key, "must be an integer, not %s", v->number_text ? v->number_text : "a fraction");
    return 0;
  }
  return (long long)v->number;
}
long long subako_arg_int(subako_call *call, const char *key) { return subako__int(call, key, 1, 0); }
long long subako_arg_int_or(subako_call *call, const char *key, long long fallback) { return subako__int(call, key, 0, fallback); }
int subako_arg_bool(subako_call *call, const char *key) {
  const subako_json *v = subako__arg(call, key, SUBAKO_JSON_BOOL, "a boolean", 1);
  return v ? v->boolean : 0;
}
int subako_arg_bool_or(subako_call *call, const char *key, int fallback) {
  const subako_json *v = subako__arg(call, key, SUBAKO_JSON_BOOL, "a boolean", 0);
  return v ? v->boolean : subako_json_get(call->arguments, key) ? 0 : fallback;
}
const subako_json *subako_arg_array(subako_call *call, const char *key) { return subako__arg(call, key, SUBAKO_JSON_ARRAY, "an array", 1); }
const subako_json *subako_arg_object(subako_call *call, const char *key) { return subako__arg(call, key, SUBAKO_JSON_OBJECT, "an object", 1); }

/* --- results ----------------------------------------------------------------------------------------- */

static subako_json *subako__add_block(subako_call *call, const char *type) {
  subako_json *block = subako_json_set_string(subako_json_object(), "type", type);
  subako_json_push(call->content, block);
  return block;
}

void subako_text(subako_call *call, const char *text) { subako_json_set_string(subako__add_block(call, "text"), "text", text ? text : ""); }

void subako_textf(subako_call *call, const char *format, ...) {
  va_list args;
  va_start(args, format);
  char *text = subako_vformat(format, args);
  va_end(args);
  subako_text(call, text);
}

void subako_structured(subako_call *call, subako_json *object) { call->structured = object; }

void subako_image(subako_call *call, const char *mime_type, const void *data, size_t length) {
  subako_json *block = subako__add_block(call, "image");
  subako_json_set_string(block, "data", subako_base64(data, length));
  subako_json_set_string(block, "mimeType", mime_type);
}

void subako_link(subako_call *call, const char *uri, const char *name, const char *mime_type) {
  subako_json *block = subako__add_block(call, "resource_link");
  subako_json_set_string(block, "uri", uri);
  subako_json_set_string(block, "name", name);
  if (mime_type) subako_json_set_string(block, "mimeType", mime_type);
}

int subako_link_file(subako_call *call, const char *path, const char *mime_type) {
  char *uri = subako_volume_uri(path);
  if (!uri) return -1;
  const char *slash = strrchr(path, '/');
  subako_link(call, uri, slash ? slash + 1 : path, mime_type);
  return 0;
}

void subako_set_error(subako_call *call) { call->is_error = 1; }

void subako_error(subako_call *call, const char *format, ...) {
  va_list args;
  va_start(args, format);
  char *text = subako_vformat(format, args);
  va_end(args);
  subako_text(call, text);
  call->is_error = 1;
}

/* --- the wire ---------------------------------------------------------------------------------------- */

/* Writes one message as one line and flushes: the ABI reads stdout a line at a time. */
static void subako__send(subako_buf *line) {
  subako_buf_append(line, "\n", 1);
  fwrite(line->data, 1, line->length, stdout);
  fflush(stdout);
  subako_buf_free(line);
}

static void subako__answer(const subako_json *id, const subako_json *result) {
  subako_buf line = {0};
  subako_buf_puts(&line, "{\"jsonrpc\":\"2.0\",\"id\":");
  subako_buf_json(&line, id);
  subako_buf_puts(&line, ",\"result\":");
  subako_buf_json(&line, result);
  subako_buf_puts(&line, "}");
  subako__send(&line);
}

static void subako__answer_error(const subako_json *id, int code, const char *message, const subako_json *data) {
  subako_buf line = {0};
  subako_buf_puts(&line, "{\"jsonrpc\":\"2.0\",\"id\":");
  subako_buf_json(&line, id);
  subako_buf_printf(&line, ",\"error\":{\"code\":%d,\"message\":", code);
  subako_buf_json_string(&line, message, strlen(message));
  if (data) {
    subako_buf_puts(&line, ",\"data\":");
    subako_buf_json(&line, data);
  }
  subako_buf_puts(&line, "}}");
  subako__send(&line);
}

void subako_progress(subako_call *call, double done, double total, const char *message) {
  if (!call->progress_token) return;
  subako_json *params = subako_json_object();
  subako_json_set(params, "progressToken", subako__shallow(call->progress_token));
  subako_json_set_number(params, "progress", done);
  if (total >= 0) subako_json_set_number(params, "total", total);
  if (message) subako_json_set_string(params, "message", message);
  subako_buf line = {0};
  subako_buf_puts(&line, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":");
  subako_buf_json(&line, params);
  subako_buf_puts(&line, "}");
  subako__send(&line);
}

/* --- the server -------------------------------------------------------------------------------------- */

static const subako_tool *subako__tools;
static size_t subako__tool_count;
static subako_json **subako__tool_json; /* each tool as tools/list shows it, built once */

/* How many values of the request being answered were nested too deep to read (see subako__step_over). */
static int subako__stepped_over;

static subako_json *subako__complete(subako_json *result) { return subako_json_set_string(result, "resultType", "complete"); }

/* Parses a tool's schema (or annotations) text at start-up; one that is not a JSON object stops the module
 * with a reason on stderr, which discovery shows: a broken table is found by `subako build`, not by a model. */
static subako_json *subako__schema(const subako_tool *tool, const char *field, const char *text) {
  const char *error = NULL;
  subako_json *schema = subako_json_parse(text, strlen(text), &error);
  if (!schema || schema->type != SUBAKO_JSON_OBJECT) {
    fprintf(stderr, "subako: tool \"%s\": %s is not a JSON object (%s); fix it in the tool table\n", tool->name, field,
            error ? error : "another JSON value");
    exit(1);
  }
  return schema;
}

static void subako__build_tools(const subako_tool *tools, size_t count) {
  subako__tools = tools;
  subako__tool_count = count;
  subako__arena_now = &subako__tools_arena;
  subako__tool_json = (subako_json **)subako_alloc(sizeof(subako_json *) * (count ? count : 1));
  for (size_t i = 0; i < count; i++) {
    const subako_tool *t = &tools[i];
    if (!t->name || !t->handler) {
      fprintf(stderr, "subako: tool %zu has no %s; every tool needs .name and .handler\n", i + 1, t->name ? "handler" : "name");
      exit(1);
    }
    subako_json *tool = subako_json_set_string(subako_json_object(), "name", t->name);
    if (t->title) subako_json_set_string(tool, "title", t->title);
    if (t->description) subako_json_set_string(tool, "description", t->description);
    subako_json_set(tool, "inputSchema", t->input_schema ? subako__schema(t, "input_schema", t->input_schema)
                                                         : subako_json_set_string(subako_json_object(), "type", "object"));
    if (t->output_schema) subako_json_set(tool, "outputSchema", subako__schema(t, "output_schema", t->output_schema));
    if (t->annotations) subako_json_set(tool, "annotations", subako__schema(t, "annotations", t->annotations));
    subako__tool_json[i] = tool;
  }
  subako__arena_now = &subako__request_arena;
}

static void subako__discover(const subako_json *id) {
  subako_json *result = subako_json_object();
  subako_json_set(result, "supportedVersions", subako_json_push(subako_json_array(), subako_json_string(SUBAKO_PROTOCOL_VERSION)));
  subako_json_set(result, "capabilities", subako_json_set(subako_json_object(), "tools", subako_json_object()));
  subako__answer(id, subako__complete(result));
}

/* The cursor is the index of the page's first tool, in decimal: opaque to the client, checked here. */
static void subako__tools_list(const subako_json *id, const subako_json *params) {
  size_t start = 0;
  const subako_json *cursor = subako_json_get(params, "cursor");
  if (cursor && cursor->type != SUBAKO_JSON_NULL) {
    const char *text = subako_json_string_of(cursor);
    char *end = NULL;
    unsigned long n = text && *text >= '0' && *text <= '9' ? strtoul(text, &end, 10) : 0;
    if (!text || !end || *end || n == 0 || n >= subako__tool_count) {
      subako__answer_error(id, -32602, "tools/list: this cursor was not given by this server", NULL);
      return;
    }
    start = (size_t)n;
  }
  size_t stop = start + SUBAKO_TOOLS_PAGE_SIZE < subako__tool_count ? start + SUBAKO_TOOLS_PAGE_SIZE : subako__tool_count;
  subako_json *page = subako_json_array();
  /* A shallow copy of each built tool: pushing links the node, and the built ones must stay intact. */
  for (size_t i = start; i < stop; i++) {
    subako_json_push(page, subako__shallow(subako__tool_json[i]));
  }
  subako_json *result = subako_json_set(subako_json_object(), "tools", page);
  if (stop < subako__tool_count) subako_json_set_string(result, "nextCursor", subako_format("%zu", stop));
  subako__answer(id, subako__complete(result));
}

static void subako__tool_result(const subako_json *id, subako_json *content, int is_error, subako_json *structured) {
  subako_json *result = subako_json_set(subako_json_object(), "content", content);
  if (structured) subako_json_set(result, "structuredContent", structured);
  if (is_error) subako_json_set_bool(result, "isError", 1);
  subako__answer(id, subako__complete(result));
}

static void subako__tools_call(const subako_json *id, const subako_json *params) {
  const char *name = subako_json_string_of(subako_json_get(params, "name"));
  if (!name) {
    subako__answer_error(id, -32602, "tools/call needs params.name, a string", NULL);
    return;
  }
  const subako_tool *tool = NULL;
  for (size_t i = 0; i < subako__tool_count && !tool; i++)
    if (strcmp(subako__tools[i].name, name) == 0) tool = &subako__tools[i];

  subako_call call;
  memset(&call, 0, sizeof call);
  call.content = subako_json_array();
  if (!tool) {
    /* Said to the model as a tool error: a JSON-RPC error would be reported as a crash of the package. */
    subako_buf names = {0};
    for (size_t i = 0; i < subako__tool_count; i++) {
      if (i) subako_buf_puts(&names, ", ");
      subako_buf_puts(&names, subako__tools[i].name);
    }
    subako_error(&call, "unknown tool \"%s\"; this package offers: %s", name, names.data ? names.data : "");
    subako_buf_free(&names);
    subako__tool_result(id, call.content, 1, NULL);
    return;
  }
  if (subako__stepped_over) {
    subako_error(&call, "the arguments nest deeper than %d levels, more than this tool reads", SUBAKO_JSON_MAX_DEPTH);
    subako__tool_result(id, call.content, 1, NULL);
    return;
  }
  const subako_json *arguments = subako_json_get(params, "arguments");
  if (arguments && arguments->type == SUBAKO_JSON_NULL) arguments = NULL;
  if (arguments && arguments->type != SUBAKO_JSON_OBJECT) {
    subako_error(&call, "arguments must be a JSON object, not %s", subako__type_name(arguments));
    subako__tool_result(id, call.content, 1, NULL);
    return;
  }
  call.tool = tool;
  call.arguments = arguments ? arguments : subako_json_object();
  call.meta = subako_json_get(params, "_meta");
  call.progress_token = subako_json_get(call.meta, "progressToken");
  if (call.progress_token && call.progress_token->type != SUBAKO_JSON_STRING && call.progress_token->type != SUBAKO_JSON_NUMBER)
    call.progress_token = NULL;

  tool->handler(&call);

  if (call.argument_problem) {
    /* The handler was told through NULL / 0 and may have built anything: the problem is the answer. */
    subako_json *content = subako_json_array();
    subako_json_push(content, subako_json_set_string(subako_json_set_string(subako_json_object(), "type", "text"), "text",
                                                     call.argument_problem));
    subako__tool_result(id, content, 1, NULL);
    return;
  }
  if (call.structured && call.structured->type != SUBAKO_JSON_OBJECT) {
    fprintf(stderr, "subako: tool \"%s\" gave structured content that is not an object; it was left out\n", tool->name);
    call.structured = NULL;
  }
  if (call.structured && call.content->count == 0) subako_text(&call, subako_json_stringify(call.structured));
  subako__tool_result(id, call.content, call.is_error, call.structured);
}

static void subako__handle_line(const char *text, size_t length) {
  while (length && (text[length - 1] == '\n' || text[length - 1] == '\r')) length--;
  if (length == 0) return;
  const char *error = NULL;
  subako_json *message = subako__parse(text, length, &error, 1, &subako__stepped_over);
  subako_json *null_id = subako_json_null();
  if (!message) {
    fprintf(stderr, "subako: a stdin line is not JSON (%s)\n", error);
    subako__answer_error(null_id, -32700, "parse error", NULL);
    return;
  }
  const subako_json *id = subako_json_get(message, "id");
  const char *method = subako_json_string_of(subako_json_get(message, "method"));
  if (!id) return; /* a notification (or not a request at all): nothing to answer */
  if (!method) return; /* a response: subako sends none, and a stateless server asks nothing */
  const subako_json *params = subako_json_get(message, "params");
  const char *version = subako_json_string_of(subako_json_get(subako_json_get(params, "_meta"), "io.modelcontextprotocol/protocolVersion"));
  if (version && strcmp(version, SUBAKO_PROTOCOL_VERSION) != 0) {
    subako_json *data = subako_json_object();
    subako_json_set(data, "supported", subako_json_push(subako_json_array(), subako_json_string(SUBAKO_PROTOCOL_VERSION)));
    subako_json_set_string(data, "requested", version);
    subako__answer_error(id, -32022, "unsupported protocol version", data);
    return;
  }
  if (strcmp(method, "server/discover") == 0) subako__discover(id);
  else if (strcmp(method, "tools/list") == 0) subako__tools_list(id, params);
  else if (strcmp(method, "tools/call") == 0) subako__tools_call(id, params);
  else subako__answer_error(id, -32601, subako_format("method not found: %s", method), NULL);
}

/* One line of stdin into `line` (its newline kept); 0 at end of file. fgets, not getline: getline is POSIX and
 * hidden under -std=c11, and a package may well be built that way. */
static int subako__read_line(subako_buf *line) {
  char chunk[4096];
  line->length = 0;
  while (fgets(chunk, sizeof chunk, stdin)) {
    size_t n = strlen(chunk);
    subako_buf_append(line, chunk, n);
    if (n > 0 && chunk[n - 1] == '\n') return 1;
  }
  return line->length > 0;
}

int subako_serve(const subako_tool *tools, size_t count) {
  subako__build_tools(tools, count);
  subako_buf line = {0};
  while (subako__read_line(&line)) {
    subako__handle_line(line.data, line.length);
    subako__arena_free(&subako__request_arena);
  }
  subako_buf_free(&line);
  return 0;
}

/* --- subako_http ------------------------------------------------------------------------------------- */

__attribute__((import_module("subako_http"), import_name("request"))) int32_t subako__http_request(const uint8_t *ptr, int32_t len);
__attribute__((import_module("subako_http"), import_name("read_response"))) int32_t subako__http_read_response(uint8_t *ptr, int32_t len);

static const char *const subako__http_kinds[] = {
  "ok", "invalid_request", "host_not_allowed", "forbidden_destination", "credential_header", "credential_unavailable",
  "too_many_redirects", "timeout", "too_large", "not_text", "write_budget", "bad_path", "connection", "abi", "other",
};

const char *subako_http_error_name(subako_http_error error) {
  return (unsigned)error < SUBAKO_COUNT(subako__http_kinds) ? subako__http_kinds[error] : "other";
}

static subako_http_response subako__http_failure(subako_http_error error, const char *kind, const char *message) {
  subako_http_response response;
  memset(&response, 0, sizeof response);
  response.error = error;
  response.error_kind = kind;
  response.error_message = message;
  return response;
}

subako_http_response subako_http(const subako_http_request *request) {
  subako_json *req = subako_json_object();
  subako_json_set_string(req, "method", request->method ? request->method : "GET");
  subako_json_set_string(req, "url", request->url ? request->url : "");
  if (request->headers) {
    subako_json *headers = subako_json_object();
    for (const char *const *h = request->headers; h[0] && h[1]; h += 2) subako_json_set_string(headers, h[0], h[1]);
    subako_json_set(req, "headers", headers);
  }
  if (request->body_text) {
    subako_json_set(req, "body", subako_json_set_string(subako_json_set_string(subako_json_object(), "type", "text"), "text", request->body_text));
  } else if (request->body_json) {
    subako_json *body = subako_json_set_string(subako_json_object(), "type", "json");
    subako_json_set(req, "body", subako_json_set(body, "json", subako__shallow(request->body_json)));
  } else if (request->body_file) {
    subako_json_set(req, "body", subako_json_set_string(subako_json_set_string(subako_json_object(), "type", "file"), "path", request->body_file));
  }
  if (request->output_file)
    subako_json_set(req, "output", subako_json_set_string(subako_json_set_string(subako_json_object(), "type", "file"), "path", request->output_file));
  if (request->no_redirects) subako_json_set_bool(req, "follow_redirects", 0);
  if (request->timeout_ms > 0) subako_json_set_int(req, "timeout_ms", request->timeout_ms);

  subako_buf text = {0};
  subako_buf_json(&text, req);
  int32_t length = subako__http_request((const uint8_t *)text.data, (int32_t)text.length);
  subako_buf_free(&text);
  if (length < 0) return subako__http_failure(SUBAKO_HTTP_ABI, "abi", subako_format("subako_http.request returned %d", (int)length));
  char *answer = (char *)subako_alloc((size_t)length + 1);
  int32_t read = subako__http_read_response((uint8_t *)answer, length);
  if (read < 0) return subako__http_failure(SUBAKO_HTTP_ABI, "abi", subako_format("subako_http.read_response returned %d", (int)read));

  const subako_json *parsed = subako_json_parse(answer, (size_t)length, NULL);
  const subako_json *ok = subako_json_get(parsed, "ok"), *error = subako_json_get(parsed, "error");
  if (error) {
    const char *kind = subako_json_string_of(subako_json_get(error, "kind"));
    const char *message = subako_json_string_of(subako_json_get(error, "message"));
    subako_http_error code = SUBAKO_HTTP_OTHER;
    for (size_t i = 1; kind && i < SUBAKO_HTTP_OTHER; i++)
      if (strcmp(kind, subako__http_kinds[i]) == 0) code = (subako_http_error)i;
    return subako__http_failure(code, kind ? kind : "other", message ? message : "");
  }
  if (!ok || ok->type != SUBAKO_JSON_OBJECT) return subako__http_failure(SUBAKO_HTTP_ABI, "abi", "the subako_http answer is neither ok nor error");

  subako_http_response response;
  memset(&response, 0, sizeof response);
  response.error_kind = "ok";
  const subako_json *status = subako_json_get(ok, "status");
  response.status = status && status->type == SUBAKO_JSON_NUMBER ? (int)status->number : 0;
  response.headers = subako_json_get(ok, "headers");
  if (!response.headers) response.headers = subako_json_object();
  const subako_json *body = subako_json_get(ok, "body");
  const char *type = subako_json_string_of(subako_json_get(body, "type"));
  if (type && strcmp(type, "file") == 0) {
    const subako_json *bytes = subako_json_get(body, "bytes");
    response.body_file = subako_json_string_of(subako_json_get(body, "path"));
    response.body_file_bytes = bytes && bytes->type == SUBAKO_JSON_NUMBER ? (long long)bytes->number : 0;
  } else {
    const subako_json *inline_text = subako_json_get(body, "text");
    response.body = inline_text && inline_text->type == SUBAKO_JSON_STRING ? inline_text->string : "";
    response.body_length = inline_text && inline_text->type == SUBAKO_JSON_STRING ? inline_text->length : 0;
  }
  return response;
}

subako_http_response subako_http_get(const char *url) {
  subako_http_request request;
  memset(&request, 0, sizeof request);
  request.url = url;
  return subako_http(&request);
}

const char *subako_http_header(const subako_http_response *response, const char *name) {
  return subako_json_string_of(subako_json_get(response->headers, name));
}

const subako_json *subako_http_json(const subako_http_response *response) {
  if (response->error != SUBAKO_HTTP_OK || !response->body) return NULL;
  return subako_json_parse(response->body, response->body_length, NULL);
}

/* --- files ------------------------------------------------------------------------------------------- */

/* Deepest first: the folders above a preopen (/volume itself) are not the guest's to stat or make, so the
 * walk goes up only while a parent is missing (ENOENT) and never touches what already exists. */
static int subako__make_dirs(char *path) {
  if (mkdir(path, 0777) == 0 || errno == EEXIST) return 0;
  if (errno != ENOENT) return errno;
  char *slash = strrchr(path, '/');
  if (!slash || slash == path) return ENOENT;
  *slash = 0;
  int failed = subako__make_dirs(path);
  *slash = '/';
  if (failed) return failed;
  return mkdir(path, 0777) == 0 || errno == EEXIST ? 0 : errno;
}

int subako_make_dirs(const char *path) {
  size_t n = strlen(path);
  while (n > 1 && path[n - 1] == '/') n--;
  return subako__make_dirs(subako__strndup(path, n));
}

int subako_write_file(const char *path, const void *data, size_t length) {
  const char *slash = strrchr(path, '/');
  if (slash && slash != path) {
    int made = subako_make_dirs(subako__strndup(path, (size_t)(slash - path)));
    if (made) return made;
  }
  FILE *f = fopen(path, "wb");
  if (!f) return errno;
  size_t written = fwrite(data, 1, length, f);
  int failed = written != length ? (errno ? errno : EIO) : 0;
  if (fclose(f) != 0 && !failed) failed = errno ? errno : EIO;
  return failed;
}

char *subako_read_file(const char *path, size_t *length) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  subako_buf buf = {0};
  char chunk[16384];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) subako_buf_append(&buf, chunk, n);
  int failed = ferror(f);
  fclose(f);
  if (failed) {
    subako_buf_free(&buf);
    return NULL;
  }
  char *out = subako__strndup(buf.data ? buf.data : "", buf.length);
  if (length) *length = buf.length;
  subako_buf_free(&buf);
  return out;
}

char *subako_volume_uri(const char *path) {
  static const char prefix[] = "/volume/";
  if (strncmp(path, prefix, sizeof prefix - 1) != 0 || !path[sizeof prefix - 1]) return NULL;
  subako_buf buf = {0};
  subako_buf_puts(&buf, "volume:///");
  for (const char *p = path + sizeof prefix - 1; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      subako_buf_append(&buf, p, 1);
    } else {
      subako_buf_printf(&buf, "%%%02X", c);
    }
  }
  char *out = subako__strndup(buf.data, buf.length);
  subako_buf_free(&buf);
  return out;
}

#endif /* SUBAKO_IMPLEMENTATION_DONE */
#endif /* SUBAKO_IMPLEMENTATION */
