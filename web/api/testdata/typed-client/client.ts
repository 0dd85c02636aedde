// A small client typed from the console's OpenAPI document by
// openapi-typescript (schema.d.ts, generated beside this file by the test
// TestATypedClientSendsArgumentsAndReadsAnswers). It must compile under
// tsc --strict and then run against the console: it reads a tool's input
// schema, sends a proposal's arguments, waits for the invocation, and
// reads a refusal's fields and details, printing what it read as JSON.
import type { components, paths } from "./schema";

type Invocation = components["schemas"]["Invocation"];
type Proposal = components["schemas"]["Proposal"];
type ApiError = components["schemas"]["Error"];
type ToolList = components["schemas"]["ToolList"];
type WaitQuery = NonNullable<paths["/invocations/{id}"]["get"]["parameters"]["query"]>;
type WaitHeader = paths["/invocations/{id}"]["get"]["responses"][200]["headers"]["Countersign-Wait"];

// The test passes the console's address, the key, the task and an order.
declare const process: { env: Record<string, string | undefined>; exitCode?: number };
const base = `${process.env.COUNTERSIGN_URL}/api/v1`;
const key = process.env.COUNTERSIGN_KEY ?? "";
const task = process.env.COUNTERSIGN_TASK ?? "";
const order = process.env.COUNTERSIGN_ORDER ?? "";

async function call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; json: T }> {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: body === undefined ? null : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as T };
}

async function main(): Promise<void> {
  const tools = await call<ToolList>("GET", `/tools?task=${encodeURIComponent(task)}`);
  const refund = tools.json.tools.find((t) => t.name === "issue_refund");
  const properties = refund?.input_schema["properties"];
  const toolArgs = typeof properties === "object" && properties !== null ? Object.keys(properties).sort() : [];

  // The arguments are the action's own: a free-form object.
  const proposal: Proposal = {
    action: "issue_refund",
    args: { order_id: order, amount_cents: 700, reason_code: "damaged" },
    summary: "Refund $7.00 for the damaged lamp",
  };
  const proposed = await call<Invocation>("POST", `/tasks/${encodeURIComponent(task)}/invocations`, proposal);
  const inv = proposed.json;
  const amount: unknown = inv.args.proposed["amount_cents"];

  const query: WaitQuery = { wait: "1s", state: inv.state };
  const waited = await call<Invocation>("GET", `/invocations/${inv.id}?wait=${query.wait}&state=${query.state}`);
  const why = waited.headers.get("Countersign-Wait") as WaitHeader;

  const refused = await call<ApiError>("POST", `/tasks/${encodeURIComponent(task)}/invocations`, {
    action: "issue_refund",
    args: { order_id: order, amount_cents: 1, reason_code: "whim" },
  } satisfies Proposal);
  const fields: Record<string, string> = refused.json.fields ?? {};
  const details: Record<string, unknown> = refused.json.details ?? {};

  console.log(JSON.stringify({
    tool_args: toolArgs,
    proposed_status: proposed.status,
    state: inv.state,
    say: inv.say,
    amount_cents: amount,
    quote_lines: inv.quote.lines.length,
    waited_state: waited.json.state,
    wait: why ?? null,
    refused_status: refused.status,
    refused_code: refused.json.code,
    refused_fields: Object.keys(fields),
    refused_details: Object.keys(details),
  }));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
