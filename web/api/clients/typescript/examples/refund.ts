// The refund scenario with @countersign/client, without an agent framework:
// the business's site hands over the task assertion, the task opens here
// (the model never holds it), a refund is proposed, and its outcome is
// waited for with the API's long poll. Run after `npm run build`:
//   COUNTERSIGN_URL=… COUNTERSIGN_KEY=… COUNTERSIGN_ASSERTION=… \
//   COUNTERSIGN_CUSTOMER=… COUNTERSIGN_ORDER=… node dist/examples/refund.js
// It prints one JSON line when the refund is proposed and one when it has
// an outcome.
import { Countersign, takeCustomerPage } from "../src/index.js";

declare const process: { env: Record<string, string | undefined>; exitCode?: number };
const env = (name: string): string => process.env[name] ?? "";

async function main(): Promise<void> {
  const cs = new Countersign({ baseUrl: env("COUNTERSIGN_URL"), apiKey: env("COUNTERSIGN_KEY") });
  const session = await cs.openTask({
    customerRef: env("COUNTERSIGN_CUSTOMER"),
    conversationId: `example-${Date.now()}`,
    allowedActions: ["issue_refund"],
    customerAssertion: env("COUNTERSIGN_ASSERTION"),
  });
  const proposed = await session.propose("issue_refund",
    { order_id: env("COUNTERSIGN_ORDER"), amount_cents: 700, reason_code: "damaged" },
    { summary: "Refund $7.00 for the damaged lamp" });
  // What the model is given: never the customer's page.
  const pages: string[] = [];
  const forModel = takeCustomerPage(proposed, (url) => pages.push(url));
  console.log(JSON.stringify({ proposed: forModel.id, state: forModel.state, say: forModel.say, mcp_url: session.mcpUrl }));
  const settled = await cs.settle(proposed.id, 60_000);
  console.log(JSON.stringify({ settled: settled.id, state: settled.state, say: settled.say, pages: pages.length }));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
