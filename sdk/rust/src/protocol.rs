//! ABI 1's conversation: JSON-RPC 2.0 requests on stdin, one per line; one compact JSON answer per
//! request on stdout; exit 0 at end of input. Stateless MCP 2026-07-28: no `initialize`, every request
//! carries `_meta`, `server/discover` says what we speak.

use serde_json::{json, Map, Value};
use std::cell::RefCell;
use std::io::{BufRead, Write};

use crate::{Args, Result, ToolResult};

/// The one revision ABI 1 speaks.
pub const PROTOCOL_VERSION: &str = "2026-07-28";
/// Tools per `tools/list` page. Subako reads up to 16 pages, so 16 a page covers the 64 tools it allows.
pub const TOOLS_PAGE_SIZE: usize = 16;

const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

type Handler = Box<dyn Fn(&Args) -> Result>;

thread_local! {
    /// The `progressToken` of the call being answered, when its caller asked for progress.
    static PROGRESS_TOKEN: RefCell<Option<Value>> = RefCell::new(None);
}

/// Tells the caller how far the current call is: `done` of `total` (when known), with a short line for
/// people. A `notifications/progress` on stdout, sent only when the call's caller asked for progress (its
/// request carried a `progressToken`); otherwise nothing. Keep `done` rising: subako drops the rest.
pub fn progress(done: f64, total: Option<f64>, message: Option<&str>) {
    let token = PROGRESS_TOKEN.with(|token| token.borrow().clone());
    let token = match token {
        Some(token) => token,
        None => return,
    };
    let mut params = json!({ "progressToken": token, "progress": done });
    if let Some(total) = total {
        params["total"] = Value::from(total);
    }
    if let Some(message) = message {
        params["message"] = Value::from(message);
    }
    let line = json!({ "jsonrpc": "2.0", "method": "notifications/progress", "params": params });
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    // A notification that cannot be written is not worth failing the call over.
    let _ = writeln!(out, "{line}").and_then(|_| out.flush());
}

/// One tool: what `tools/list` says about it, and the handler `tools/call` runs.
pub struct Tool {
    name: String,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    handler: Handler,
}

/// A tool named `name` (1 to 64 of `a-z 0-9 _ -`), described for the model, with a JSON Schema whose top
/// is `"type": "object"`.
pub fn tool(name: &str, description: &str, input_schema: Value, handler: impl Fn(&Args) -> Result + 'static) -> Tool {
    Tool {
        name: name.to_string(),
        description: description.to_string(),
        input_schema,
        output_schema: None,
        handler: Box::new(handler),
    }
}

impl Tool {
    /// The schema of the tool's `structuredContent` (shown to people, not the model).
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    fn describe(&self) -> Value {
        let mut tool = json!({ "name": self.name, "description": self.description, "inputSchema": self.input_schema });
        if let Some(schema) = &self.output_schema {
            tool["outputSchema"] = schema.clone();
        }
        tool
    }

    /// Runs the handler; an `Err` is the model's `isError` result.
    pub fn call(&self, args: &Args) -> ToolResult {
        match (self.handler)(args) {
            Ok(result) => result,
            Err(error) => error.into(),
        }
    }
}

/// Answers requests from stdin until it closes, then returns (so `main` returns and the module exits 0).
pub fn serve(tools: Vec<Tool>) {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut line = Vec::new();
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) => return,
            Ok(_) => {}
            Err(error) => {
                eprintln!("subako: reading stdin failed: {error}");
                return;
            }
        }
        let text = String::from_utf8_lossy(&line);
        if let Some(answer) = answer_line(&tools, &text) {
            let mut out = stdout.lock();
            // Stdout is the protocol: one line per answer, flushed, so subako reads it while stdin stays open.
            if writeln!(out, "{answer}").and_then(|_| out.flush()).is_err() {
                return;
            }
        }
    }
}

/// The answer to one input line, or `None` for a line that asks for none: blank, a notification (no `id`),
/// or not JSON-RPC at all (said on stderr, since there is no id to answer).
pub fn answer_line(tools: &[Tool], line: &str) -> Option<String> {
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    let message: Value = match serde_json::from_str(line) {
        Ok(message) => message,
        Err(error) => {
            eprintln!("subako: ignored a line on stdin that is not JSON: {error}");
            return None;
        }
    };
    let id = message.get("id")?.clone();
    let method = match message.get("method").and_then(Value::as_str) {
        Some(method) => method,
        None => {
            eprintln!("subako: ignored a message with an id but no method (a stateless server is sent only requests)");
            return None;
        }
    };
    let empty = Map::new();
    let params = message.get("params").and_then(Value::as_object).unwrap_or(&empty);
    let outcome = answer_request(tools, method, params);
    let response = match outcome {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err((code, message, data)) => {
            let mut error = json!({ "code": code, "message": message });
            if let Some(data) = data {
                error["data"] = data;
            }
            json!({ "jsonrpc": "2.0", "id": id, "error": error })
        }
    };
    Some(response.to_string())
}

type RpcError = (i64, String, Option<Value>);

fn answer_request(tools: &[Tool], method: &str, params: &Map<String, Value>) -> std::result::Result<Value, RpcError> {
    // A request that names another revision is refused as the protocol says; one without `_meta` (typed
    // by hand while testing) is answered as ours.
    if let Some(requested) = params.get("_meta").and_then(|meta| meta.get(META_PROTOCOL_VERSION)) {
        if requested.as_str() != Some(PROTOCOL_VERSION) {
            return Err((
                -32022,
                format!("unsupported protocol version {requested}; this server speaks {PROTOCOL_VERSION}"),
                Some(json!({ "supported": [PROTOCOL_VERSION], "requested": requested })),
            ));
        }
    }
    match method {
        "server/discover" => Ok(json!({
            "supportedVersions": [PROTOCOL_VERSION],
            "capabilities": { "tools": {} },
            "resultType": "complete",
        })),
        "tools/list" => list_tools(tools, params.get("cursor")),
        "tools/call" => Ok(call_tool(tools, params)),
        other => Err((-32601, format!("method not found: {other}"), None)),
    }
}

/// One page of tools; the cursor is the index of the page's first tool, opaque to the client.
fn list_tools(tools: &[Tool], cursor: Option<&Value>) -> std::result::Result<Value, RpcError> {
    let start = match cursor {
        None | Some(Value::Null) => 0,
        Some(value) => match value.as_str().and_then(|s| s.parse::<usize>().ok()) {
            Some(start) if start < tools.len() => start,
            _ => return Err((-32602, format!("invalid cursor {value}: pass a nextCursor this server answered"), None)),
        },
    };
    let end = (start + TOOLS_PAGE_SIZE).min(tools.len());
    let page: Vec<Value> = tools[start..end].iter().map(Tool::describe).collect();
    let mut result = json!({ "tools": page, "resultType": "complete" });
    if end < tools.len() {
        result["nextCursor"] = Value::from(end.to_string());
    }
    Ok(result)
}

/// A call always answers a result: a tool that fails, an unknown tool and arguments that are not an
/// object are all `isError` results, because a JSON-RPC error would break the call.
fn call_tool(tools: &[Tool], params: &Map<String, Value>) -> Value {
    let token = params.get("_meta").and_then(|meta| meta.get("progressToken")).filter(|t| t.is_string() || t.is_number());
    PROGRESS_TOKEN.with(|slot| *slot.borrow_mut() = token.cloned());
    let result = call_tool_with(tools, params);
    PROGRESS_TOKEN.with(|slot| *slot.borrow_mut() = None);
    result
}

fn call_tool_with(tools: &[Tool], params: &Map<String, Value>) -> Value {
    let mut result = match params.get("name").and_then(Value::as_str) {
        None => ToolResult::error("tools/call needs the tool's name"),
        Some(name) => match tools.iter().find(|tool| tool.name == name) {
            None => {
                let known: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
                ToolResult::error(format!("unknown tool \"{name}\"; this package has: {}", known.join(", ")))
            }
            Some(tool) => match params.get("arguments") {
                None | Some(Value::Null) => tool.call(&Args::default()),
                Some(Value::Object(map)) => tool.call(&Args::new(map.clone())),
                Some(other) => ToolResult::error(format!("arguments must be a JSON object, not {}", crate::args::describe(other))),
            },
        },
    }
    .to_value();
    result["resultType"] = Value::from("complete");
    result
}
