// The scripted model the framework examples share: what each framework's
// own mock model answers, turn by turn. It proposes the refund, then waits
// for the outcome with wait_for_outcome until the invocation is terminal,
// then says its last word. It reads the invocation out of whatever the
// framework put in its prompt (any structure, JSON text included), and it
// keeps every prompt it was given so the example can print what the model
// saw.
import { terminalStates, type State } from "../../src/index.js";

declare const process: { env: Record<string, string | undefined> };

/** A move of the scripted model: a tool call or its final text. */
export type Move = { tool: string; args: Record<string, unknown> } | { text: string };

/** Reads an environment variable ("" when unset). */
export const env = (name: string): string => process.env[name] ?? "";

/** The scripted refund conversation and everything the model was given. */
export class RefundScript {
  /** Every prompt the model received, as JSON. */
  readonly seen: string[] = [];
  private announced = false;

  constructor(private readonly order: string, private readonly cents: number) {}

  /** The model's next move given its whole prompt. */
  next(prompt: unknown): Move {
    this.seen.push(JSON.stringify(prompt));
    const inv = lastInvocation(prompt);
    if (inv === undefined) {
      return { tool: "propose_issue_refund", args: { order_id: this.order, amount_cents: this.cents, reason_code: "damaged",
        summary: `Refund $${(this.cents / 100).toFixed(2)} for the damaged lamp` } };
    }
    if (!this.announced) {
      // The host learns what was proposed from the model's side, as a test harness would.
      this.announced = true;
      console.log(JSON.stringify({ proposed: inv.id, state: inv.state }));
    }
    if (terminalStates.includes(inv.state as State)) return { text: `Done: ${inv.say ?? inv.state}` };
    return { tool: "wait_for_outcome", args: { invocation_id: inv.id, seconds: 30, state: inv.state } };
  }

  /** The line the example ends with: the outcome and every prompt the model was given. */
  report(id: string, state: string, said: string): string {
    return JSON.stringify({ outcome: id, state, said, model_saw: this.seen });
  }
}

type Inv = { id: string; state: string; say?: string };

/** The last invocation anywhere in v: an object, or JSON text holding one. */
export function lastInvocation(v: unknown): Inv | undefined {
  let found: Inv | undefined;
  const walk = (x: unknown): void => {
    if (typeof x === "string") {
      if (x.includes("\"state\"")) {
        try {
          walk(JSON.parse(x));
        } catch {
          // Not JSON: text the model was given, nothing to read.
        }
      }
      return;
    }
    if (Array.isArray(x)) {
      x.forEach(walk);
      return;
    }
    if (typeof x === "object" && x !== null) {
      const o = x as Record<string, unknown>;
      if (typeof o.id === "string" && o.id.startsWith("inv_") && typeof o.state === "string") {
        found = { id: o.id, state: o.state, ...(typeof o.say === "string" ? { say: o.say } : {}) };
        return;
      }
      Object.values(o).forEach(walk);
    }
  };
  walk(v);
  return found;
}
