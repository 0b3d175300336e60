//! HTTP through the host: the `subako_http` import. The host sends the request (HTTPS only, to the hosts
//! the function's network policy allows, with the session's credentials added where granted, which the
//! guest never sees) and answers `{"ok": ...}` or `{"error": {"kind", "message"}}`.
//!
//! ```no_run
//! # fn f() -> subako::Result {
//! use subako::http;
//! let response = http::get("https://api.example.com/status")?; // an http::Error becomes an isError result
//! let status: subako::Value = response.json()?;
//! # Ok(subako::ToolResult::json(status)) }
//! ```

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// A request. Only `url` is required; the host's defaults are GET, no headers, an inline answer, and
/// redirects followed (up to 10 hops).
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    method: String,
    url: String,
    headers: BTreeMap<String, String>,
    body: Option<Value>,
    output: Option<Value>,
    follow_redirects: Option<bool>,
    timeout_ms: Option<u64>,
    /// Why `json` could not make a body (a map with keys that are not strings, ...), reported by `send`.
    body_error: Option<String>,
}

impl Request {
    /// `method` is one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS (the host refuses others with
    /// `invalid_request`).
    pub fn new(method: &str, url: &str) -> Self {
        Request {
            method: method.to_ascii_uppercase(),
            url: url.to_string(),
            headers: BTreeMap::new(),
            body: None,
            output: None,
            follow_redirects: None,
            timeout_ms: None,
            body_error: None,
        }
    }

    pub fn get(url: &str) -> Self {
        Request::new("GET", url)
    }

    pub fn post(url: &str) -> Self {
        Request::new("POST", url)
    }

    /// A header; names are sent lowercase. Connection headers (`host`, `content-length`, ...) are dropped
    /// by the host.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.insert(name.to_ascii_lowercase(), value.to_string());
        self
    }

    /// A text body (sent as `text/plain; charset=utf-8` unless a `content-type` header says otherwise).
    pub fn text(mut self, text: &str) -> Self {
        self.body = Some(json!({ "type": "text", "text": text }));
        self
    }

    /// A JSON body (sent as `application/json` unless a `content-type` header says otherwise).
    pub fn json(mut self, value: impl Serialize) -> Self {
        match serde_json::to_value(value) {
            Ok(value) => self.body = Some(json!({ "type": "json", "json": value })),
            Err(error) => self.body_error = Some(format!("the JSON body could not be written: {error}")),
        }
        self
    }

    /// The body is a volume file, streamed by the host (it never passes through the module's memory).
    pub fn file_body(mut self, path: &str) -> Self {
        self.body = Some(json!({ "type": "file", "path": path }));
        self
    }

    /// Saves the answer's body to a volume file (replaced, parent folders created, counted against the
    /// call's write budget) instead of answering it inline. Use it for bodies over 256 KiB or not UTF-8.
    pub fn save_to(mut self, path: &str) -> Self {
        self.output = Some(json!({ "type": "file", "path": path }));
        self
    }

    pub fn follow_redirects(mut self, follow: bool) -> Self {
        self.follow_redirects = Some(follow);
        self
    }

    /// Bounds the whole request; the call's own deadline applies either way.
    pub fn timeout_ms(mut self, timeout_ms: u64) -> Self {
        self.timeout_ms = Some(timeout_ms);
        self
    }

    /// The request as the JSON the host reads.
    pub fn to_value(&self) -> Value {
        let mut request = Map::new();
        request.insert("method".into(), Value::from(self.method.clone()));
        request.insert("url".into(), Value::from(self.url.clone()));
        if !self.headers.is_empty() {
            let headers: Map<String, Value> = self.headers.iter().map(|(k, v)| (k.clone(), Value::from(v.clone()))).collect();
            request.insert("headers".into(), Value::Object(headers));
        }
        if let Some(body) = &self.body {
            request.insert("body".into(), body.clone());
        }
        if let Some(output) = &self.output {
            request.insert("output".into(), output.clone());
        }
        if let Some(follow) = self.follow_redirects {
            request.insert("follow_redirects".into(), Value::Bool(follow));
        }
        if let Some(timeout) = self.timeout_ms {
            request.insert("timeout_ms".into(), Value::from(timeout));
        }
        Value::Object(request)
    }

    /// Sends the request and waits for the answer.
    pub fn send(&self) -> Result<Response, Error> {
        request(self)
    }
}

/// What the server answered. A status of 404 or 500 is an answer, not an [`Error`].
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub status: u16,
    /// Lowercase names; repeated headers joined with ", ".
    pub headers: BTreeMap<String, String>,
    pub body: Body,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// The body as text (at most 256 KiB of UTF-8).
    Inline(String),
    /// The body was saved to a volume file ([`Request::save_to`]).
    File { path: String, bytes: u64 },
}

impl Response {
    /// True for a 2xx status.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }

    /// The inline body ("" when it was saved to a file).
    pub fn text(&self) -> &str {
        match &self.body {
            Body::Inline(text) => text,
            Body::File { .. } => "",
        }
    }

    /// The inline body read as JSON.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.text())
    }
}

/// Why the host sent nothing, or got no answer: the kinds the ABI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request does not parse, or names an impossible method, URL or header.
    InvalidRequest,
    /// The function's network policy does not admit the host.
    HostNotAllowed,
    /// Plain `http`, or an address in a private or reserved range.
    ForbiddenDestination,
    /// The request sets a header that a credential sets for that origin.
    CredentialHeader,
    /// The session's vaults hold no single usable credential for a granted origin.
    CredentialUnavailable,
    TooManyRedirects,
    Timeout,
    /// An inline body over 256 KiB: save it to a file instead.
    TooLarge,
    /// An inline body that is not UTF-8: save it to a file instead.
    NotText,
    /// Saving the body would pass the call's write budget.
    WriteBudget,
    /// A body or output path that is not a usable volume file.
    BadPath,
    /// The connection failed or broke.
    Connection,
    /// The ABI was misused (e.g. a request larger than 8 MiB, or an answer that did not parse).
    Abi,
    /// A kind this SDK does not know yet, as the host named it.
    Other(String),
}

impl ErrorKind {
    pub fn parse(kind: &str) -> ErrorKind {
        match kind {
            "invalid_request" => ErrorKind::InvalidRequest,
            "host_not_allowed" => ErrorKind::HostNotAllowed,
            "forbidden_destination" => ErrorKind::ForbiddenDestination,
            "credential_header" => ErrorKind::CredentialHeader,
            "credential_unavailable" => ErrorKind::CredentialUnavailable,
            "too_many_redirects" => ErrorKind::TooManyRedirects,
            "timeout" => ErrorKind::Timeout,
            "too_large" => ErrorKind::TooLarge,
            "not_text" => ErrorKind::NotText,
            "write_budget" => ErrorKind::WriteBudget,
            "bad_path" => ErrorKind::BadPath,
            "connection" => ErrorKind::Connection,
            "abi" => ErrorKind::Abi,
            other => ErrorKind::Other(other.to_string()),
        }
    }

    /// The kind as the ABI spells it, e.g. `host_not_allowed`.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::HostNotAllowed => "host_not_allowed",
            ErrorKind::ForbiddenDestination => "forbidden_destination",
            ErrorKind::CredentialHeader => "credential_header",
            ErrorKind::CredentialUnavailable => "credential_unavailable",
            ErrorKind::TooManyRedirects => "too_many_redirects",
            ErrorKind::Timeout => "timeout",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::NotText => "not_text",
            ErrorKind::WriteBudget => "write_budget",
            ErrorKind::BadPath => "bad_path",
            ErrorKind::Connection => "connection",
            ErrorKind::Abi => "abi",
            ErrorKind::Other(kind) => kind,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.message)
    }
}

impl std::error::Error for Error {}

/// A GET of `url`.
pub fn get(url: &str) -> Result<Response, Error> {
    Request::get(url).send()
}

pub fn request(request: &Request) -> Result<Response, Error> {
    if let Some(message) = &request.body_error {
        return Err(Error { kind: ErrorKind::InvalidRequest, message: message.clone() });
    }
    let answer = exchange(request.to_value().to_string().as_bytes())?;
    read_answer(&answer)
}

/// The host's answer JSON as a [`Response`] or an [`Error`].
pub fn read_answer(answer: &[u8]) -> Result<Response, Error> {
    let answer: Value = serde_json::from_slice(answer).map_err(|e| abi_error(format!("the host's answer is not JSON: {e}")))?;
    if let Some(error) = answer.get("error") {
        let kind = error.get("kind").and_then(Value::as_str).unwrap_or("abi");
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        return Err(Error { kind: ErrorKind::parse(kind), message: message.to_string() });
    }
    let ok = answer.get("ok").ok_or_else(|| abi_error("the host's answer has neither ok nor error".into()))?;
    let status = ok.get("status").and_then(Value::as_u64).unwrap_or(0) as u16;
    let headers = ok
        .get("headers")
        .and_then(Value::as_object)
        .map(|h| h.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string()))).collect())
        .unwrap_or_default();
    let body = ok.get("body");
    let body = match body.and_then(|b| b.get("type")).and_then(Value::as_str) {
        Some("file") => Body::File {
            path: body.and_then(|b| b.get("path")).and_then(Value::as_str).unwrap_or("").to_string(),
            bytes: body.and_then(|b| b.get("bytes")).and_then(Value::as_u64).unwrap_or(0),
        },
        _ => Body::Inline(body.and_then(|b| b.get("text")).and_then(Value::as_str).unwrap_or("").to_string()),
    };
    Ok(Response { status, headers, body })
}

fn abi_error(message: String) -> Error {
    Error { kind: ErrorKind::Abi, message }
}

/// Hands the request to the host and copies its answer back: `request` holds the answer and says its
/// length, `read_response` copies it. A negative return is a misuse of the ABI (-1 a range outside memory,
/// -2 no answer held, -3 a length that does not match).
#[cfg(target_arch = "wasm32")]
fn exchange(request: &[u8]) -> Result<Vec<u8>, Error> {
    #[link(wasm_import_module = "subako_http")]
    extern "C" {
        #[link_name = "request"]
        fn subako_http_request(ptr: *const u8, len: i32) -> i32;
        #[link_name = "read_response"]
        fn subako_http_read_response(ptr: *mut u8, len: i32) -> i32;
    }
    let len = i32::try_from(request.len()).map_err(|_| abi_error("the request is larger than the ABI allows".into()))?;
    // SAFETY: the pointer and length describe `request`, which lives across the call; the host only reads it.
    let answer_len = unsafe { subako_http_request(request.as_ptr(), len) };
    if answer_len < 0 {
        return Err(abi_error(format!("subako_http.request returned {answer_len}")));
    }
    let mut answer = vec![0u8; answer_len as usize];
    // SAFETY: `answer` has exactly `answer_len` bytes for the host to write.
    let code = unsafe { subako_http_read_response(answer.as_mut_ptr(), answer_len) };
    if code != 0 {
        return Err(abi_error(format!("subako_http.read_response returned {code}")));
    }
    Ok(answer)
}

/// Off wasm (a package's own unit tests on the build machine) there is no host to ask.
#[cfg(not(target_arch = "wasm32"))]
fn exchange(_request: &[u8]) -> Result<Vec<u8>, Error> {
    Err(abi_error("subako_http is only available inside a subako function (target wasm32-wasi)".into()))
}
