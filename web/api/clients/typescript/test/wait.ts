// Checks waitForOutcome's bounds without a console: the wait it asks for
// is 1 to 30 seconds, since wait=0 is a plain read whose answer says no
// outcome. Exits non-zero, naming the case, when one fails.
import { Countersign } from "../src/index.js";

declare const process: { exitCode?: number };
const asked: string[] = [];
const stand = async (input: RequestInfo | URL): Promise<Response> => {
  asked.push(String(input));
  return new Response(JSON.stringify({ id: "inv_1", state: "rejected" }), { headers: { "Countersign-Wait": "changed" } });
};
const cs = new Countersign({ baseUrl: "http://console.test", apiKey: "csk_live_x", fetch: stand as typeof fetch });
const failures: string[] = [];
for (const [seconds, want] of [[0, "wait=1"], [0.5, "wait=1"], [90, "wait=30"], [20, "wait=20"]] as const) {
  const { outcome } = await cs.waitForOutcome("inv_1", { seconds });
  const url = asked.at(-1) ?? "";
  if (!url.endsWith(`?${want}`) || outcome !== "changed") failures.push(`seconds ${seconds}: asked ${url}, read ${outcome}`);
}
if (failures.length > 0) {
  console.error(`waitForOutcome: ${failures.join("; ")}`);
  process.exitCode = 1;
} else {
  console.log("waitForOutcome: all checks passed");
}
