//! Files under `/volume` (and the read-only `/package` and `/skills`): the session's volume is what a
//! package keeps between calls (`/volume/data`, when the agent enables it) or hands back to subako
//! (`/volume/tmp`, e.g. an image a result links to). Paths are absolute; std::fs finds the WASI preopen
//! that holds them. Every helper answers a crate [`Error`](crate::Error) naming the path, so `?` in a
//! handler turns a failure into a result the model can read.

use crate::{Error, Result};
use std::fs;
use std::path::Path;

/// Scratch space of the session, always mounted.
pub const TMP: &str = "/volume/tmp";
/// The session's lasting files, mounted when the agent enables it.
pub const DATA: &str = "/volume/data";
/// The package's own assets (read-only), mounted when the package has any.
pub const PACKAGE: &str = "/package";

/// Writes `bytes` to `path`, replacing the file and creating its parent directories.
pub fn write(path: &str, bytes: impl AsRef<[u8]>) -> Result<()> {
    if let Some(parent) = Path::new(path).parent() {
        fs::create_dir_all(parent).map_err(|e| file_error("create the folder of", path, e))?;
    }
    fs::write(path, bytes).map_err(|e| file_error("write", path, e))
}

pub fn read(path: &str) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| file_error("read", path, e))
}

pub fn read_to_string(path: &str) -> Result<String> {
    fs::read_to_string(path).map_err(|e| file_error("read", path, e))
}

pub fn exists(path: &str) -> bool {
    Path::new(path).exists()
}

pub fn remove(path: &str) -> Result<()> {
    fs::remove_file(path).map_err(|e| file_error("remove", path, e))
}

/// The names in a directory, sorted.
pub fn list(path: &str) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in fs::read_dir(path).map_err(|e| file_error("list", path, e))? {
        let entry = entry.map_err(|e| file_error("list", path, e))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

/// `/volume/tmp/my chart.png` as `volume:///tmp/my%20chart.png`, the URI a `resource_link` names a
/// volume file by; `None` for a path that is not beneath `/volume`.
pub fn uri(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/volume/")?;
    let segments: Vec<String> = rest.split('/').filter(|s| !s.is_empty()).map(percent_encode).collect();
    if segments.is_empty() {
        return None;
    }
    Some(format!("volume:///{}", segments.join("/")))
}

/// The image type of a file name by its extension: the formats subako shows to the model.
pub fn image_mime_type(path: &str) -> Option<&'static str> {
    let extension = path.rsplit('.').next()?.to_ascii_lowercase();
    match extension.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "gif" => Some("image/gif"),
        "webp" => Some("image/webp"),
        _ => None,
    }
}

/// Percent-encodes everything but RFC 3986's unreserved characters, as encodeURIComponent does.
fn percent_encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn file_error(action: &str, path: &str, error: std::io::Error) -> Error {
    Error::new(format!("could not {action} {path}: {error}"))
}
