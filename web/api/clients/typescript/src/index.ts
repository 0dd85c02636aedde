// The assistant's side of Countersign for TypeScript, typed from the
// console's OpenAPI document (schema.d.ts, made by openapi-typescript).
// It removes the glue an agent framework needs: the business's task
// assertion opens the task here, outside the model; the customer's page is
// taken out of tool results and handed to the host's UI; and an outcome
// that comes later is waited for with the API's long poll.
import type { components, paths } from "./schema.js";

/** An invocation: a proposed write and where it stands. */
export type Invocation = components["schemas"]["Invocation"];
/** A task: the boundary of one assignment for one customer. */
export type Task = components["schemas"]["Task"];
/** The API's error body. */
export type ApiError = components["schemas"]["Error"];
/** An invocation's state. */
export type State = Invocation["state"];
/** Why a long poll answered: changed, final or timeout. */
export type WaitOutcome = NonNullable<paths["/invocations/{id}"]["get"]["responses"][200]["headers"]["Countersign-Wait"]>;

/** States nothing more happens in (a completed write's reversal aside). */
export const terminalStates: readonly State[] = ["completed", "failed", "not_dispatched", "rejected", "expired", "reversed"];

/** The longest one long poll waits, in seconds (the API's bound). */
export const maxWaitSeconds = 30;

/** A refusal by the API: its status and error body (code, message, hint, fields). */
export class CountersignError extends Error {
  constructor(readonly status: number, readonly body: ApiError) {
    super(`${status} ${body.code}: ${body.message}`);
    this.name = "CountersignError";
  }
}

/** Where the console is and the assistant's API key. */
export interface ClientOptions {
  /** The console's address, e.g. https://console.example.com. */
  baseUrl: string;
  /** The assistant's API key (csk_live_…). */
  apiKey: string;
  /** The fetch to use; the global one by default. */
  fetch?: typeof fetch;
}

/** What opens a task for the customer the business's site signed in. */
export interface OpenTask {
  customerRef: string;
  conversationId: string;
  allowedActions: string[];
  /** The task assertion the business's site signed for this assistant and customer: it never passes through the model. */
  customerAssertion?: string;
  writeBudget?: number;
  inflightLimit?: number;
  ratePerMinute?: number;
}

/** Countersign's assistant API. */
export class Countersign {
  readonly baseUrl: string;
  private readonly apiKey: string;
  private readonly fetch: typeof fetch;

  constructor(opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, "");
    this.apiKey = opts.apiKey;
    this.fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** Sends one API request; a non-2xx answer throws CountersignError. */
  async request<T>(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; body: T }> {
    const res = await this.fetch(`${this.baseUrl}/api/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${this.apiKey}`, "Content-Type": "application/json" },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const json: unknown = await res.json();
    if (!res.ok) {
      throw new CountersignError(res.status, json as ApiError);
    }
    return { status: res.status, headers: res.headers, body: json as T };
  }

  /**
   * Opens a task with the business's assertion, here and not in the model,
   * and returns a session bound to it: hand the framework its MCP address
   * and headers, or propose through it.
   */
  async openTask(input: OpenTask): Promise<TaskSession> {
    const body: components["schemas"]["NewTask"] = {
      customer_ref: input.customerRef,
      conversation_id: input.conversationId,
      allowed_actions: input.allowedActions,
    };
    if (input.customerAssertion !== undefined) body.customer_assertion = input.customerAssertion;
    if (input.writeBudget !== undefined) body.write_budget = input.writeBudget;
    if (input.inflightLimit !== undefined) body.inflight_limit = input.inflightLimit;
    if (input.ratePerMinute !== undefined) body.rate_per_minute = input.ratePerMinute;
    const res = await this.request<Task>("POST", "/tasks", body);
    return new TaskSession(this, this.apiKey, res.body);
  }

  /** Reads an invocation. */
  async invocation(id: string): Promise<Invocation> {
    return (await this.request<Invocation>("GET", `/invocations/${encodeURIComponent(id)}`)).body;
  }

  /**
   * One long poll: answers as soon as the invocation leaves state (its state
   * now when omitted), at once when it is terminal, or after seconds (at
   * most 30, at least 1: a wait of 0 is a plain read, which answers no
   * outcome) with where it stands then.
   */
  async waitForOutcome(id: string, opts: { seconds?: number; state?: State } = {}): Promise<{ invocation: Invocation; outcome: WaitOutcome }> {
    const seconds = Math.min(Math.max(Math.floor(opts.seconds ?? 20), 1), maxWaitSeconds);
    const state = opts.state === undefined ? "" : `&state=${opts.state}`;
    const res = await this.request<Invocation>("GET", `/invocations/${encodeURIComponent(id)}?wait=${seconds}${state}`);
    return { invocation: res.body, outcome: (res.headers.get("Countersign-Wait") ?? "timeout") as WaitOutcome };
  }

  /**
   * Long polls until the invocation is terminal or its result needs a person
   * (unverified), or until withinMs passed; returns it as it is then.
   */
  async settle(id: string, withinMs = 120_000): Promise<Invocation> {
    const end = Date.now() + withinMs;
    let inv = await this.invocation(id);
    while (!terminalStates.includes(inv.state) && inv.state !== "unverified") {
      const left = Math.ceil((end - Date.now()) / 1000);
      if (left <= 0) break;
      inv = (await this.waitForOutcome(id, { seconds: Math.min(left, maxWaitSeconds), state: inv.state })).invocation;
    }
    return inv;
  }
}

/** A task opened outside the model, and what a framework needs to act in it. */
export class TaskSession {
  constructor(private readonly client: Countersign, private readonly apiKey: string, readonly task: Task) {}

  /** The MCP server of this task: its tools need no task_id and cannot reach another task. */
  get mcpUrl(): string {
    return `${this.client.baseUrl}/mcp?task=${encodeURIComponent(this.task.id)}`;
  }

  /** The headers an MCP client sends to mcpUrl. */
  get mcpHeaders(): Record<string, string> {
    return { Authorization: `Bearer ${this.apiKey}` };
  }

  /** Proposes a write in this task: a dry-run routed by policy; nothing changes yet. */
  async propose(action: string, args: Record<string, unknown>, opts: { summary?: string; system?: string; idempotencyKey?: string } = {}): Promise<Invocation> {
    const body: components["schemas"]["Proposal"] = { action, args };
    if (opts.summary !== undefined) body.summary = opts.summary;
    if (opts.system !== undefined) body.system = opts.system;
    return (await this.client.request<Invocation>("POST", `/tasks/${encodeURIComponent(this.task.id)}/invocations`, body)).body;
  }
}

/**
 * What the model is told instead of the link: that the customer was asked
 * on their own device, and what to do meanwhile (the Python package's
 * ASKED_ON_THEIR_DEVICE).
 */
export const askedOnTheirDevice =
  "The customer was asked to confirm on their own device: the confirmation page was handed to their " +
  "app (you do not see the link). Nothing happens until they confirm there, after proving who they " +
  "are. Tell them so, then wait for the outcome.";

/** What stands in the model's copy wherever the link appeared in other text. */
export const linkWithheld = "(the confirmation page, given to the customer's app)";

/** JSON-RPC's URLElicitationRequired, whose data.elicitations carry pages. */
export const urlElicitationRequired = -32042;

/**
 * Takes the customer's confirmation page out of a tool result before the
 * model sees it and hands it to the host's UI, for clients that do not
 * speak URL elicitation. It looks through the whole result as frameworks
 * pass it on: an invocation, an MCP tool result (structuredContent and
 * its content), a bare content list, JSON text, JSON text within JSON
 * text, a JSON-RPC error -32042 (its data.elicitations). Each distinct
 * page found goes to show once; every invocation waiting for the customer
 * loses its link, is marked as sent (next.elicitation) and says so in
 * next.message (askedOnTheirDevice), as the server does over URL
 * elicitation; any other mention of a page becomes linkWithheld. A result
 * without a page comes back unchanged, and the result given is left as it
 * was.
 */
export function takeCustomerPage<T>(result: T, show: (url: string) => void): T {
  const pages: string[] = [];
  const take = (url: string): void => {
    if (!pages.includes(url)) pages.push(url);
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") {
      let parsed: unknown;
      try {
        parsed = JSON.parse(v);
      } catch {
        return v; // Text that is not JSON carries no invocation; scrub catches a mention.
      }
      if (typeof parsed !== "object" || parsed === null) return v;
      const before = pages.length;
      const out = walk(parsed);
      return pages.length === before ? v : JSON.stringify(out);
    }
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v !== "object" || v === null || Object.getPrototypeOf(v) !== Object.prototype) return v;
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = walk(x);
    const next = o.next as { kind?: unknown; url?: unknown } | undefined;
    if (next?.kind === "confirm" && typeof next.url === "string" && next.url !== "") {
      take(next.url);
      o.next = { ...next, url: "", elicitation: "sent", message: askedOnTheirDevice };
    }
    const data = o.data as { elicitations?: unknown } | undefined;
    if (o.code === urlElicitationRequired && Array.isArray(data?.elicitations)) {
      o.data = {
        ...data,
        elicitations: data.elicitations.map((e: unknown) => {
          const el = e as { mode?: unknown; url?: unknown };
          if (el?.mode !== "url" || typeof el.url !== "string" || el.url === "") return e;
          take(el.url);
          return { ...el, url: "" };
        }),
      };
    }
    return o;
  };
  const scrub = (v: unknown): unknown => {
    if (typeof v === "string") return pages.reduce((s, p) => s.split(p).join(linkWithheld), v);
    if (Array.isArray(v)) return v.map(scrub);
    if (typeof v !== "object" || v === null || Object.getPrototypeOf(v) !== Object.prototype) return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrub(x)]));
  };
  const out = walk(result);
  if (pages.length === 0) return result;
  for (const p of pages) show(p);
  return scrub(out) as T;
}
