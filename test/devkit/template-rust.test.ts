import { byteList, templateFlow } from './template-flow.js';

templateFlow({
  template: 'rust',
  source: 'src/main.rs',
  addTools(source, png) {
    const functions = `
/// fetch: a GET through subako_http; answers the status and the body.
fn fetch(args: &Args) -> subako::Result {
    let url = args.string("url")?;
    let response = subako::http::get(&url)?;
    Ok(ToolResult::json(json!({ "status": response.status, "body": response.text() })))
}

const CHART_PNG: &[u8] = &[${byteList(png)}];

/// chart: an image file in the session's volume, answered as a link the model sees as the image.
fn chart(_args: &Args) -> subako::Result {
    subako::volume::write("/volume/tmp/chart.png", CHART_PNG)?;
    Ok(ToolResult::link("/volume/tmp/chart.png"))
}

fn main() {`;
    const tools = `subako::serve(vec![
        tool("fetch", "GET a URL.", json!({ "type": "object", "properties": { "url": { "type": "string" } }, "required": ["url"] }), fetch),
        tool("chart", "Draw a chart.", json!({ "type": "object" }), chart),
        tool(`;
    return source.replace('\nfn main() {', functions).replace('subako::serve(vec![tool(', tools);
  },
});
