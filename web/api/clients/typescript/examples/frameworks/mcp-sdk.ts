// The refund scenario with the MCP TypeScript SDK's own client, which
// speaks URL elicitation: the host's loop gives the shared script (the
// model) each tool result and nothing else; the customer's page comes as
// an elicitation (one JSON line {"page": …}) and no result filter runs, so
// the page never reaching the model is the server's doing. Run after
// building with tsconfig.frameworks.json:
//   COUNTERSIGN_URL=… COUNTERSIGN_KEY=… COUNTERSIGN_ASSERTION=… COUNTERSIGN_CUSTOMER=… \
//   COUNTERSIGN_ORDER=… COUNTERSIGN_CENTS=700 node dist/examples/frameworks/mcp-sdk.js
import { Countersign } from "../../src/index.js";
import { connectTask } from "../../src/mcp-sdk.js";
import { env, lastInvocation, RefundScript } from "./script.js";

declare const process: { exitCode?: number };

async function main(): Promise<void> {
  const cs = new Countersign({ baseUrl: env("COUNTERSIGN_URL"), apiKey: env("COUNTERSIGN_KEY") });
  const session = await cs.openTask({
    customerRef: env("COUNTERSIGN_CUSTOMER"),
    conversationId: `mcp-sdk-${Date.now()}`,
    allowedActions: ["issue_refund"],
    customerAssertion: env("COUNTERSIGN_ASSERTION"),
  });
  const mcp = await connectTask(session, { onCustomerPage: (url) => console.log(JSON.stringify({ page: url })) });
  const script = new RefundScript(env("COUNTERSIGN_ORDER"), Number(env("COUNTERSIGN_CENTS")));
  const conversation: unknown[] = [{ role: "user", content: "My walnut desk lamp arrived damaged; please refund it." }];
  try {
    for (let turn = 0; turn < 12; turn++) {
      const move = script.next(conversation);
      if ("text" in move) {
        const inv = lastInvocation(conversation);
        console.log(script.report(inv?.id ?? "", inv?.state ?? "", move.text));
        return;
      }
      conversation.push({ role: "assistant", tool: move.tool, args: move.args });
      const result = await mcp.callTool(move.tool, move.args);
      conversation.push({ role: "tool", content: result.content });
    }
    throw new Error("the script did not finish in 12 turns");
  } finally {
    await mcp.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
