//! {{name}}: a subako function package. Its tools are listed in `main`; `subako build` compiles this.
use subako::{json, tool, Args, ToolResult};

/// greet: checks its arguments, then answers structured content (the model also reads it as JSON text).
fn greet(args: &Args) -> subako::Result {
    let name = args.string("name")?; // missing or not a string: the model is told, naming "name"
    let excited = args.opt_boolean("excited")?.unwrap_or(false);
    if name.is_empty() {
        return Err("name must not be empty".into());
    }
    let message = format!("Hello, {name}{}", if excited { "!" } else { "." });
    Ok(ToolResult::json(json!({ "message": message })))
}

fn main() {
    subako::serve(vec![tool(
        "greet",
        "Greet someone by name.",
        json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "description": "Who to greet." },
                "excited": { "type": "boolean", "description": "End with an exclamation mark." }
            },
            "required": ["name"]
        }),
        greet,
    )
    .output_schema(json!({
        "type": "object", "properties": { "message": { "type": "string" } }, "required": ["message"]
    }))]);
}
