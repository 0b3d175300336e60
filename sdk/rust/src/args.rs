//! A call's `arguments`, read by name and type. Subako does not check arguments against the tool's
//! schema, so every read checks: a missing or mistyped argument is an [`Error`] that names it, and `?`
//! makes it the call's `isError` result.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::{Error, Result};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args {
    map: Map<String, Value>,
}

impl Args {
    pub fn new(map: Map<String, Value>) -> Self {
        Args { map }
    }

    /// A required string.
    pub fn string(&self, name: &str) -> Result<String> {
        self.str(name).map(str::to_string)
    }

    /// A required string, borrowed.
    pub fn str(&self, name: &str) -> Result<&str> {
        let value = self.required(name, "a string")?;
        value.as_str().ok_or_else(|| mistyped(name, "a string", value))
    }

    /// A required integer (a JSON number with no fraction, within i64).
    pub fn integer(&self, name: &str) -> Result<i64> {
        let value = self.required(name, "an integer")?;
        as_integer(value).ok_or_else(|| mistyped(name, "an integer", value))
    }

    /// A required number.
    pub fn number(&self, name: &str) -> Result<f64> {
        let value = self.required(name, "a number")?;
        value.as_f64().ok_or_else(|| mistyped(name, "a number", value))
    }

    /// A required boolean.
    pub fn boolean(&self, name: &str) -> Result<bool> {
        let value = self.required(name, "a boolean")?;
        value.as_bool().ok_or_else(|| mistyped(name, "a boolean", value))
    }

    /// A required array.
    pub fn array(&self, name: &str) -> Result<&Vec<Value>> {
        let value = self.required(name, "an array")?;
        value.as_array().ok_or_else(|| mistyped(name, "an array", value))
    }

    /// A required object.
    pub fn object(&self, name: &str) -> Result<&Map<String, Value>> {
        let value = self.required(name, "an object")?;
        value.as_object().ok_or_else(|| mistyped(name, "an object", value))
    }

    /// An optional string: `None` when absent or null, an error when it is there but not a string.
    pub fn opt_string(&self, name: &str) -> Result<Option<String>> {
        self.optional_with(name, |args| args.string(name))
    }

    pub fn opt_integer(&self, name: &str) -> Result<Option<i64>> {
        self.optional_with(name, |args| args.integer(name))
    }

    pub fn opt_number(&self, name: &str) -> Result<Option<f64>> {
        self.optional_with(name, |args| args.number(name))
    }

    pub fn opt_boolean(&self, name: &str) -> Result<Option<bool>> {
        self.optional_with(name, |args| args.boolean(name))
    }

    /// A required argument of any type serde can read (`u32`, `Vec<String>`, a struct with
    /// `#[derive(Deserialize)]`, ...); the error names the argument and says what serde expected.
    pub fn get<T: DeserializeOwned>(&self, name: &str) -> Result<T> {
        let value = self.required(name, "")?;
        T::deserialize(value).map_err(|e| Error::new(format!("argument \"{name}\" is not valid: {e}")))
    }

    /// Like [`get`](Self::get), `None` when absent or null.
    pub fn opt<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>> {
        self.optional_with(name, |args| args.get(name))
    }

    /// The whole arguments object as one type, e.g. a struct with `#[derive(Deserialize)]`.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T> {
        T::deserialize(&Value::Object(self.map.clone())).map_err(|e| Error::new(format!("the arguments are not valid: {e}")))
    }

    /// The raw value, if present.
    pub fn value(&self, name: &str) -> Option<&Value> {
        self.map.get(name)
    }

    pub fn has(&self, name: &str) -> bool {
        !matches!(self.map.get(name), None | Some(Value::Null))
    }

    pub fn as_map(&self) -> &Map<String, Value> {
        &self.map
    }

    fn required(&self, name: &str, expected: &str) -> Result<&Value> {
        match self.map.get(name) {
            None | Some(Value::Null) if expected.is_empty() => Err(Error::new(format!("argument \"{name}\" is missing"))),
            None | Some(Value::Null) => Err(Error::new(format!("argument \"{name}\" is missing: expected {expected}"))),
            Some(value) => Ok(value),
        }
    }

    fn optional_with<T>(&self, name: &str, read: impl FnOnce(&Self) -> Result<T>) -> Result<Option<T>> {
        if self.has(name) {
            read(self).map(Some)
        } else {
            Ok(None)
        }
    }
}

fn as_integer(value: &Value) -> Option<i64> {
    if let Some(integer) = value.as_i64() {
        return Some(integer);
    }
    // 3.0 is an integer to JSON Schema; serde_json reads it as a float.
    let float = value.as_f64()?;
    if float.fract() == 0.0 && float >= i64::MIN as f64 && float < i64::MAX as f64 {
        Some(float as i64)
    } else {
        None
    }
}

fn mistyped(name: &str, expected: &str, value: &Value) -> Error {
    Error::new(format!("argument \"{name}\" must be {expected}, not {}", describe(value)))
}

pub(crate) fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.as_f64().map_or(false, |f| f.fract() != 0.0) => "a number with a fraction",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
