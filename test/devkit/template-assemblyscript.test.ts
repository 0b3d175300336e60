import { byteList, templateFlow } from './template-flow.js';

templateFlow({
  template: 'assemblyscript',
  source: 'assembly/index.ts',
  addTools(source, png) {
    const tools = `
import { http, files } from "subako-as";

tool({
  name: "fetch",
  description: "GET a URL.",
  inputSchema: \`{ "type": "object", "properties": { "url": { "type": "string" } }, "required": ["url"] }\`,
}, (args: Args): Result => {
  const url = args.string("url");
  if (!args.ok) return args.error();
  const response = http.get(url);
  if (!response.ok) return Result.error(response.errorName + ": " + response.message);
  return Result.json(Json.object().setInteger("status", response.status).setString("body", response.text));
});

const CHART_PNG: StaticArray<u8> = [${byteList(png)}];

tool({ name: "chart", description: "Draw a chart.", inputSchema: \`{ "type": "object" }\` }, (args: Args): Result => {
  const bytes = new Uint8Array(CHART_PNG.length);
  for (let i = 0; i < CHART_PNG.length; i++) bytes[i] = CHART_PNG[i];
  const written = files.write("/volume/tmp/chart.png", bytes);
  if (!written.ok) return Result.error(written.message);
  return Result.link("/volume/tmp/chart.png");
});

serve();`;
    return source.replace(/\nserve\(\);\s*$/, tools);
  },
});
