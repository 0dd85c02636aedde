// The refund scenario with the Vercel AI SDK, driven by its own mock model
// (MockLanguageModelV4 from ai/test) following the shared script: the task
// opens here with the business's assertion, the model gets the task's
// tools through aiSDKTools, the customer's page goes to the host's UI (one
// JSON line {"page": …}), and the model waits with wait_for_outcome. Run
// after building with tsconfig.frameworks.json:
//   COUNTERSIGN_URL=… COUNTERSIGN_KEY=… COUNTERSIGN_ASSERTION=… COUNTERSIGN_CUSTOMER=… \
//   COUNTERSIGN_ORDER=… COUNTERSIGN_CENTS=700 node dist/examples/frameworks/ai-sdk.js
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { Countersign } from "../../src/index.js";
import { aiSDKTools } from "../../src/ai-sdk.js";
import { env, lastInvocation, RefundScript } from "./script.js";

declare const process: { exitCode?: number };

async function main(): Promise<void> {
  const cs = new Countersign({ baseUrl: env("COUNTERSIGN_URL"), apiKey: env("COUNTERSIGN_KEY") });
  const session = await cs.openTask({
    customerRef: env("COUNTERSIGN_CUSTOMER"),
    conversationId: `ai-sdk-${Date.now()}`,
    allowedActions: ["issue_refund"],
    customerAssertion: env("COUNTERSIGN_ASSERTION"),
  });
  const { tools, close } = await aiSDKTools(session, { onCustomerPage: (url) => console.log(JSON.stringify({ page: url })) });
  const script = new RefundScript(env("COUNTERSIGN_ORDER"), Number(env("COUNTERSIGN_CENTS")));
  let calls = 0;
  const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
  const model = new MockLanguageModelV4({
    doGenerate: async ({ prompt }) => {
      const move = script.next(prompt);
      if ("text" in move) {
        return { content: [{ type: "text", text: move.text }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
      }
      calls++;
      return {
        content: [{ type: "tool-call", toolCallId: `call_${calls}`, toolName: move.tool, input: JSON.stringify(move.args) }],
        finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [],
      };
    },
  });
  try {
    const res = await generateText({ model, tools, prompt: "My walnut desk lamp arrived damaged; please refund it.", stopWhen: isStepCount(12) });
    const inv = lastInvocation(res.steps.map((s) => s.toolResults));
    console.log(script.report(inv?.id ?? "", inv?.state ?? "", res.text));
  } finally {
    await close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
