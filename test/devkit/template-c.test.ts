import { byteList, templateFlow } from './template-flow.js';

templateFlow({
  template: 'c',
  source: 'src/main.c',
  addTools(source, png) {
    const tools = `
/* fetch: a GET through subako_http; answers the status and the body. */
static void fetch(subako_call *call) {
  const char *url = subako_arg_string(call, "url");
  if (!subako_args_ok(call)) return;
  subako_http_request request = {.url = url};
  subako_http_response response = subako_http(&request);
  if (response.error != SUBAKO_HTTP_OK) {
    subako_error(call, "%s: %s", subako_http_error_name(response.error), response.error_message);
    return;
  }
  subako_json *out = subako_json_object();
  subako_json_set_int(out, "status", response.status);
  subako_json_set_string(out, "body", response.body);
  subako_structured(call, out);
}

static const unsigned char CHART_PNG[] = {${byteList(png)}};

/* chart: an image file in the session's volume, answered as a link the model sees as the image. */
static void chart(subako_call *call) {
  if (subako_write_file("/volume/tmp/chart.png", CHART_PNG, sizeof CHART_PNG) != 0) {
    subako_error(call, "cannot write /volume/tmp/chart.png");
    return;
  }
  subako_link_file(call, "/volume/tmp/chart.png", "image/png");
}

static const subako_tool TOOLS[] = {
  {.name = "fetch", .description = "GET a URL.", .handler = fetch,
   .input_schema = SUBAKO_JSON({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]})},
  {.name = "chart", .description = "Draw a chart.", .handler = chart, .input_schema = SUBAKO_JSON({"type": "object"})},`;
    return source.replace('static const subako_tool TOOLS[] = {', tools);
  },
});
