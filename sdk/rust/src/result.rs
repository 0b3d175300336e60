//! The answer to a `tools/call`: an MCP `CallToolResult` with the content blocks subako reads.

use serde::Serialize;
use serde_json::{json, Map, Value};
use std::fmt;

use crate::base64;
use crate::volume;

/// A failure the model should read: a handler's `Err` becomes a result with `isError: true` and this
/// message as its text, never a JSON-RPC error (that would break the call).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    message: String,
}

impl Error {
    pub fn new(message: impl Into<String>) -> Self {
        Error { message: message.into() }
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<&str> for Error {
    fn from(message: &str) -> Self {
        Error::new(message)
    }
}

impl From<String> for Error {
    fn from(message: String) -> Self {
        Error::new(message)
    }
}

impl From<serde_json::Error> for Error {
    fn from(error: serde_json::Error) -> Self {
        Error::new(format!("invalid JSON: {error}"))
    }
}

impl From<std::io::Error> for Error {
    fn from(error: std::io::Error) -> Self {
        Error::new(format!("file error: {error}"))
    }
}

impl From<crate::http::Error> for Error {
    fn from(error: crate::http::Error) -> Self {
        Error::new(format!("HTTP request failed ({}): {}", error.kind.as_str(), error.message))
    }
}

impl From<Error> for ToolResult {
    fn from(error: Error) -> Self {
        ToolResult::error(error.message)
    }
}

/// A `CallToolResult` under construction. Start with one constructor and add blocks with the `with_*`
/// methods: `ToolResult::text("a chart").with_link("/volume/tmp/chart.png")`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolResult {
    content: Vec<Value>,
    structured: Option<Map<String, Value>>,
    is_error: bool,
}

impl ToolResult {
    /// No blocks yet.
    pub fn new() -> Self {
        ToolResult::default()
    }

    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult::new().with_text(text)
    }

    /// Structured content: `value` as `structuredContent` (when it is a JSON object, as MCP requires) and
    /// as a text block of compact JSON, which is what the model reads.
    pub fn json(value: impl Serialize) -> Self {
        ToolResult::new().with_json(value)
    }

    /// One inline image block (`data` base64-encoded here). Counted against the call's 1 MiB of stdout:
    /// write a large image to `/volume/tmp` and [`link`](Self::link) it instead.
    pub fn image(bytes: &[u8], mime_type: &str) -> Self {
        ToolResult::new().with_image(bytes, mime_type)
    }

    /// One `resource_link` block. `target` is a path under `/volume` (made a `volume:///` URI, each
    /// segment percent-encoded; subako shows the image file it names to the model) or any URI, used as
    /// given. An image's `mimeType` is added from its extension.
    pub fn link(target: &str) -> Self {
        ToolResult::new().with_link(target)
    }

    /// A failure the model reads: one text block and `isError: true`.
    pub fn error(message: impl Into<String>) -> Self {
        let mut result = ToolResult::text(message);
        result.is_error = true;
        result
    }

    pub fn with_text(self, text: impl Into<String>) -> Self {
        self.with_block(json!({ "type": "text", "text": text.into() }))
    }

    pub fn with_json(mut self, value: impl Serialize) -> Self {
        match serde_json::to_value(value) {
            Ok(Value::Object(object)) => {
                let text = Value::Object(object.clone()).to_string();
                self.structured = Some(object);
                self.with_text(text)
            }
            Ok(other) => self.with_text(other.to_string()),
            Err(error) => ToolResult::error(format!("the result could not be written as JSON: {error}")),
        }
    }

    pub fn with_image(self, bytes: &[u8], mime_type: &str) -> Self {
        self.with_block(json!({ "type": "image", "mimeType": mime_type, "data": base64::encode(bytes) }))
    }

    pub fn with_link(self, target: &str) -> Self {
        let uri = if target.starts_with('/') { volume::uri(target) } else { None };
        let uri = uri.unwrap_or_else(|| target.to_string());
        let name = link_name(target);
        let mut block = json!({ "type": "resource_link", "uri": uri, "name": name });
        if let Some(mime_type) = volume::image_mime_type(target) {
            block["mimeType"] = Value::from(mime_type);
        }
        self.with_block(block)
    }

    /// Any content block, as MCP defines them (subako shows text, image and resource_link blocks).
    pub fn with_block(mut self, block: Value) -> Self {
        self.content.push(block);
        self
    }

    /// Sets `structuredContent` without adding a text block.
    pub fn with_structured(mut self, object: Map<String, Value>) -> Self {
        self.structured = Some(object);
        self
    }

    pub fn is_error(&self) -> bool {
        self.is_error
    }

    pub fn content(&self) -> &[Value] {
        &self.content
    }

    /// The `CallToolResult` as JSON.
    pub fn to_value(&self) -> Value {
        let mut result = Map::new();
        result.insert("content".into(), Value::Array(self.content.clone()));
        if let Some(structured) = &self.structured {
            result.insert("structuredContent".into(), Value::Object(structured.clone()));
        }
        if self.is_error {
            result.insert("isError".into(), Value::Bool(true));
        }
        Value::Object(result)
    }
}

/// The last segment of a path or URI, which is what a `resource_link` shows as its name.
fn link_name(target: &str) -> String {
    let path = target.split(|c| c == '?' || c == '#').next().unwrap_or(target);
    match path.trim_end_matches('/').rsplit('/').next() {
        Some(last) if !last.is_empty() => last.to_string(),
        _ => target.to_string(),
    }
}
