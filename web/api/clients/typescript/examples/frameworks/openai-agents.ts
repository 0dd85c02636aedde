// The refund scenario with the OpenAI Agents SDK. The SDK ships no mock
// model, so a scripted one implements its Model interface, following the
// shared script: the task opens here with the business's assertion, the
// agent gets the task's tools through CountersignMCPServer, the customer's
// page goes to the host's UI (one JSON line {"page": …}), and the model
// waits with wait_for_outcome. Run after building with
// tsconfig.frameworks.json:
//   COUNTERSIGN_URL=… COUNTERSIGN_KEY=… COUNTERSIGN_ASSERTION=… COUNTERSIGN_CUSTOMER=… \
//   COUNTERSIGN_ORDER=… COUNTERSIGN_CENTS=700 node dist/examples/frameworks/openai-agents.js
import { Agent, run, setTracingDisabled, Usage, type Model, type ModelRequest, type ModelResponse, type StreamEvent } from "@openai/agents";
import { Countersign } from "../../src/index.js";
import { CountersignMCPServer } from "../../src/openai-agents.js";
import { env, lastInvocation, RefundScript } from "./script.js";

declare const process: { exitCode?: number };

/** A Model that answers with the script's moves. */
class ScriptedModel implements Model {
  private calls = 0;
  constructor(private readonly script: RefundScript) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const move = this.script.next(request.input);
    if ("text" in move) {
      return { usage: new Usage(), output: [{ type: "message", role: "assistant", status: "completed",
        content: [{ type: "output_text", text: move.text }] }] };
    }
    this.calls++;
    return { usage: new Usage(), output: [{ type: "function_call", callId: `call_${this.calls}`, name: move.tool,
      arguments: JSON.stringify(move.args), status: "completed" }] };
  }

  getStreamedResponse(): AsyncIterable<StreamEvent> {
    throw new Error("the scripted model does not stream");
  }
}

async function main(): Promise<void> {
  setTracingDisabled(true);
  const cs = new Countersign({ baseUrl: env("COUNTERSIGN_URL"), apiKey: env("COUNTERSIGN_KEY") });
  const session = await cs.openTask({
    customerRef: env("COUNTERSIGN_CUSTOMER"),
    conversationId: `openai-agents-${Date.now()}`,
    allowedActions: ["issue_refund"],
    customerAssertion: env("COUNTERSIGN_ASSERTION"),
  });
  const server = new CountersignMCPServer(session, { onCustomerPage: (url) => console.log(JSON.stringify({ page: url })) });
  await server.connect();
  const script = new RefundScript(env("COUNTERSIGN_ORDER"), Number(env("COUNTERSIGN_CENTS")));
  try {
    const agent = new Agent({ name: "Support", instructions: "Help the customer with their order.", model: new ScriptedModel(script),
      mcpServers: [server] });
    const res = await run(agent, "My walnut desk lamp arrived damaged; please refund it.", { maxTurns: 12 });
    const inv = lastInvocation(res.newItems.map((i) => i.rawItem));
    console.log(script.report(inv?.id ?? "", inv?.state ?? "", String(res.finalOutput ?? "")));
  } finally {
    await server.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
