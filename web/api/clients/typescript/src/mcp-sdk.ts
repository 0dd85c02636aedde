// The MCP TypeScript SDK adapter, for hosts that drive the SDK's client
// themselves: it declares URL elicitation, so the server gives the
// customer's page to the client and never into a tool result. Under
// protocol 2025-11-25 a proposal waiting for the customer answers the
// JSON-RPC error -32042 with the page; the adapter hands it to the host's
// UI and retries the call, which the server recognises as the same
// request and answers without the link (next.elicitation "sent").
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { urlElicitationRequired, type TaskSession } from "./index.js";

/** An MCP client of one task that takes the customer's page as a URL elicitation. */
export class TaskMCPClient {
  constructor(readonly client: Client, private readonly onCustomerPage: (url: string) => void) {}

  /**
   * Calls a tool; when the server asks for a URL elicitation (-32042) it
   * hands each page to the host's UI and calls the tool once more.
   */
  async callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    try {
      return (await this.client.callTool({ name, arguments: args })) as CallToolResult;
    } catch (err: unknown) {
      const e = err as { code?: number; data?: { elicitations?: { mode?: string; url?: string }[] } };
      if (e.code !== urlElicitationRequired) throw err;
      for (const el of e.data?.elicitations ?? []) {
        if (el.mode === "url" && el.url) this.onCustomerPage(el.url);
      }
      return (await this.client.callTool({ name, arguments: args })) as CallToolResult;
    }
  }

  /** Closes the connection. */
  close(): Promise<void> {
    return this.client.close();
  }
}

/**
 * Connects the MCP TypeScript SDK's client to a task opened outside the
 * model (Countersign.openTask), declaring URL elicitation; the customer's
 * page reaches onCustomerPage (the host's UI) and not the tool results.
 */
export async function connectTask(session: TaskSession, opts: { onCustomerPage: (url: string) => void; name?: string }): Promise<TaskMCPClient> {
  const client = new Client({ name: opts.name ?? "countersign-mcp-sdk", version: "1" }, { capabilities: { elicitation: { url: {} } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(session.mcpUrl), { requestInit: { headers: session.mcpHeaders } }));
  return new TaskMCPClient(client, opts.onCustomerPage);
}
