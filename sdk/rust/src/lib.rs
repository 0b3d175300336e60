//! Write a subako function package in Rust.
//!
//! A function package is a WASI preview 1 command that speaks MCP (revision 2026-07-28, stateless) over
//! stdin and stdout: ABI 1. This crate is that loop, so a package is its tools and nothing else:
//!
//! ```no_run
//! use subako::{json, tool, Args, ToolResult};
//!
//! fn greet(args: &Args) -> subako::Result {
//!     let name = args.string("name")?; // missing or not a string: an isError result naming "name"
//!     if name.is_empty() {
//!         return Err("name must not be empty".into());
//!     }
//!     Ok(ToolResult::json(json!({ "message": format!("Hello, {name}!") })))
//! }
//!
//! fn main() {
//!     subako::serve(vec![tool(
//!         "greet",
//!         "Greet someone by name.",
//!         json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] }),
//!         greet,
//!     )]);
//! }
//! ```
//!
//! - [`tool`] names a tool, its description, its input schema and its handler; [`serve`] answers
//!   `server/discover`, `tools/list` (paged, 16 tools a page) and `tools/call` until stdin closes.
//! - A handler takes [`Args`] and returns [`Result`]: `Ok(ToolResult)` for an answer, `Err(Error)` for a
//!   failure the model reads (an `isError` result). `?` works on argument access, [`http`], [`volume`],
//!   JSON and I/O errors alike.
//! - [`ToolResult::text`], [`ToolResult::json`], [`ToolResult::image`], [`ToolResult::link`] and
//!   [`ToolResult::error`] build the content blocks the spec names.
//! - [`progress`] tells a caller that asked for it how far a long call is.
//! - A panic aborts the module (wasm32-wasi has no unwinding): subako reports the call as a crash with the
//!   panic message from stderr. Return an `Err` for anything the model should read.

mod args;
mod base64;
pub mod http;
mod protocol;
mod result;
pub mod volume;

pub use args::Args;
pub use protocol::{answer_line, progress, serve, tool, Tool, PROTOCOL_VERSION, TOOLS_PAGE_SIZE};
pub use result::{Error, ToolResult};

/// serde_json's `json!` macro and `Value`, so a package needs no direct dependency on serde_json.
pub use serde_json::{json, Value};
/// The crates themselves, for a package that wants their traits.
pub use serde;
pub use serde_json;

/// What a handler returns: `Ok` with its result, or `Err` with a message the model reads as an `isError`
/// result.
pub type Result<T = ToolResult> = std::result::Result<T, Error>;
