// A client on the TypeScript SDK 1.20 (npm), which speaks MCP 2025-06-18:
// it calls ask_user_question on `userq mcp ARGV...` once and answers the
// form it is sent, as a human would tick it: every checkbox, the last
// choice of each list, text in each text field. It prints one JSON line:
// the revision it negotiated, the forms it was sent, and the tool's result.
// Run by tests/test_mcp_node.py, never shipped.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema, LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const questions = JSON.parse(process.env.QUESTIONS);
const forms = [];

const client = new Client({ name: "ts-sdk-1.20", version: "1.0" }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  const schema = request.params.requestedSchema;
  forms.push(schema);
  const content = {};
  for (const [key, field] of Object.entries(schema.properties)) {
    if (field.type === "boolean") content[key] = true;
    else if (field.enum) content[key] = field.enum[field.enum.length - 1];
    else if (!key.includes(".")) content[key] = "typed";
  }
  return { action: "accept", content };
});
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
await client.connect(transport);
const result = await client.callTool({ name: "ask_user_question", arguments: { questions } });
console.log(JSON.stringify({ revision: LATEST_PROTOCOL_VERSION, forms, result }));
await client.close();
