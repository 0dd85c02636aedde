// The LangChain adapter: the task's tools over MCP
// (@langchain/mcp-adapters), each wrapped as a plain LangChain tool whose
// answer has the customer's page taken out before the model reads it. The
// adapters' MCP client cannot declare URL elicitation, so the page leaves
// through the result filter and reaches the host's UI through
// onCustomerPage.
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { DynamicStructuredTool } from "@langchain/core/tools";
import { takeCustomerPage, type TaskSession } from "./index.js";

/** What LangChain is handed for one task. */
export interface LangChainTools {
  /** The task's tools (read tools, propose_<action>, get_invocation, wait_for_outcome, pause_task), filtered. */
  tools: DynamicStructuredTool[];
  /** Closes the MCP client. */
  close(): Promise<void>;
}

/**
 * Connects LangChain's MCP client to a task opened outside the model
 * (Countersign.openTask) and returns its tools, for bindTools or a
 * LangGraph agent. A tool answer carrying the customer's confirmation page
 * hands it to onCustomerPage (the host's UI) and gives the model its copy
 * without it.
 */
export async function langChainTools(session: TaskSession, opts: { onCustomerPage: (url: string) => void }): Promise<LangChainTools> {
  const client = new MultiServerMCPClient({
    mcpServers: { countersign: { transport: "http", url: session.mcpUrl, headers: session.mcpHeaders } },
    prefixToolNameWithServerName: false,
  });
  const tools = (await client.getTools()).map((t) => new DynamicStructuredTool({
    name: t.name,
    description: t.description,
    schema: t.schema as Record<string, unknown>,
    // The MCP tool is called with the arguments alone, so it answers its
    // content rather than a ToolMessage; the wrapper makes the message.
    func: async (input: unknown, _run, config) => {
      const { toolCall: _call, ...rest } = (config ?? {}) as Record<string, unknown>;
      return takeCustomerPage(await t.invoke(input as never, rest), opts.onCustomerPage) as string;
    },
  }));
  return { tools, close: () => client.close() };
}
