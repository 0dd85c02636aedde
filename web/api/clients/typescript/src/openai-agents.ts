// The OpenAI Agents SDK adapter: the task's MCP server (@openai/agents'
// MCPServerStreamableHttp) with the customer's page taken out of every
// tool result before the model reads it. The Agents SDK's MCP client
// cannot declare URL elicitation, so the page leaves through the result
// filter and reaches the host's UI through onCustomerPage.
import { MCPServerStreamableHttp, type CallToolResult, type MCPCallToolOptions } from "@openai/agents";
import { takeCustomerPage, type TaskSession } from "./index.js";

/**
 * The MCP server of a task opened outside the model
 * (Countersign.openTask), for Agent({mcpServers: [server]}): call
 * connect() before the run and close() after. A tool result carrying the
 * customer's confirmation page hands it to onCustomerPage (the host's UI)
 * and gives the model its copy without it.
 */
export class CountersignMCPServer extends MCPServerStreamableHttp {
  private readonly onCustomerPage: (url: string) => void;

  constructor(session: TaskSession, opts: { onCustomerPage: (url: string) => void; name?: string }) {
    super({ url: session.mcpUrl, name: opts.name ?? "countersign", requestInit: { headers: session.mcpHeaders } });
    this.onCustomerPage = opts.onCustomerPage;
  }

  /** Calls a tool and takes the customer's page out of its result (callTool reads it too). */
  override async callToolResult(toolName: string, args: Record<string, unknown> | null, meta?: Record<string, unknown> | null,
    options?: MCPCallToolOptions): Promise<CallToolResult> {
    return takeCustomerPage(await super.callToolResult(toolName, args, meta, options), this.onCustomerPage);
  }
}
