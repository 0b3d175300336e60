// {{name}}: a Subako function package in AssemblyScript. Each tool() is one tool the agent can call.
import { tool, serve, Args, Result, Json } from "subako-as";

tool({
  name: "greet",
  description: "Greets someone by name, once or a few times.",
  inputSchema: `{
    "type": "object",
    "properties": {
      "name": { "type": "string", "description": "Who to greet." },
      "times": { "type": "integer", "minimum": 1, "maximum": 3, "description": "How many times (default 1)." }
    },
    "required": ["name"]
  }`,
}, (args: Args): Result => {
  // Subako does not check arguments against the schema: each getter checks its own, and a missing or
  // mistyped argument becomes an error result that names it.
  const name = args.string("name").trim();
  const times = args.optionalInteger("times", 1);
  if (!args.ok) return args.error();
  if (name.length == 0) return Result.error("name must not be empty");
  if (times < 1 || times > 3) return Result.error("times must be between 1 and 3, not " + times.toString());

  const greetings = Json.array();
  for (let i: i64 = 0; i < times; i++) greetings.pushString("Hello, " + name + "!");
  // structuredContent for clients that read it; the model reads the same JSON as text.
  return Result.json(Json.object().setString("message", "Hello, " + name + "!").set("greetings", greetings));
});

serve();
