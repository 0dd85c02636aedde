// The Vercel AI SDK adapter: the task's tools over MCP (@ai-sdk/mcp), with
// the customer's page taken out of every tool result before the model
// reads it. The AI SDK's MCP client speaks only form elicitation (it
// refuses a URL one), so the page leaves through the result filter and
// reaches the host's UI through onCustomerPage.
import { createMCPClient } from "@ai-sdk/mcp";
import type { ToolSet } from "ai";
import { takeCustomerPage, type TaskSession } from "./index.js";

/** What the AI SDK is handed for one task. */
export interface AISDKTools {
  /** The task's tools (read tools, propose_<action>, get_invocation, wait_for_outcome, pause_task), filtered. */
  tools: ToolSet;
  /** Closes the MCP client. */
  close(): Promise<void>;
}

/**
 * Connects the AI SDK's MCP client to a task opened outside the model
 * (Countersign.openTask) and returns its tools for generateText or
 * streamText. A tool result carrying the customer's confirmation page hands
 * it to onCustomerPage (the host's UI) and gives the model its copy
 * without it.
 */
export async function aiSDKTools(session: TaskSession, opts: { onCustomerPage: (url: string) => void; clientName?: string }): Promise<AISDKTools> {
  const client = await createMCPClient({
    name: opts.clientName ?? "countersign-ai-sdk",
    transport: { type: "http", url: session.mcpUrl, headers: session.mcpHeaders },
  });
  const tools: ToolSet = {};
  for (const [name, t] of Object.entries(await client.tools())) {
    const execute = t.execute;
    tools[name] = execute === undefined ? t : {
      ...t,
      execute: async (input: unknown, options: Parameters<typeof execute>[1]) =>
        takeCustomerPage(await execute(input, options), opts.onCustomerPage),
    } as typeof t;
  }
  return { tools, close: () => client.close() };
}
