// The refund scenario with LangChain and a LangGraph agent
// (createReactAgent), driven by LangChain's own fake chat model
// (FakeStreamingChatModel from @langchain/core/utils/testing, whose
// answers are fixed lists) taught the shared script: the task opens here
// with the business's assertion, the agent gets the task's tools through
// langChainTools, the customer's page goes to the host's UI (one JSON line
// {"page": …}), and the model waits with wait_for_outcome. Run after
// building with tsconfig.frameworks.json:
//   COUNTERSIGN_URL=… COUNTERSIGN_KEY=… COUNTERSIGN_ASSERTION=… COUNTERSIGN_CUSTOMER=… \
//   COUNTERSIGN_ORDER=… COUNTERSIGN_CENTS=700 node dist/examples/frameworks/langchain.js
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { Countersign } from "../../src/index.js";
import { langChainTools } from "../../src/langchain.js";
import { env, lastInvocation, RefundScript } from "./script.js";

declare const process: { exitCode?: number };

/** LangChain's fake chat model answering with the script's moves. */
class ScriptedChatModel extends FakeStreamingChatModel {
  private calls = 0;
  constructor(private readonly script: RefundScript) {
    super({});
  }

  override async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const move = this.script.next(messages);
    if ("text" in move) return { generations: [{ text: move.text, message: new AIMessage(move.text) }] };
    this.calls++;
    const message = new AIMessage({ content: "", tool_calls: [{ id: `call_${this.calls}`, name: move.tool, args: move.args, type: "tool_call" }] });
    return { generations: [{ text: "", message }] };
  }

  // The fake model's bindTools answers a fresh fake model; the tools are
  // the script's to call, so the scripted one stays.
  override bindTools(): ReturnType<FakeStreamingChatModel["bindTools"]> {
    return this.withConfig({});
  }

  // LangGraph streams its model's answers: the same move, as one chunk.
  override async *_streamResponseChunks(messages: BaseMessage[]): AsyncGenerator<ChatGenerationChunk> {
    const [g] = (await this._generate(messages)).generations;
    const m = g?.message as AIMessage;
    yield new ChatGenerationChunk({ text: g?.text ?? "", message: new AIMessageChunk({ content: m.content,
      tool_call_chunks: (m.tool_calls ?? []).map((c, index) => ({ id: c.id ?? `call_${index}`, name: c.name, args: JSON.stringify(c.args), index, type: "tool_call_chunk" as const })) }) });
  }
}

async function main(): Promise<void> {
  const cs = new Countersign({ baseUrl: env("COUNTERSIGN_URL"), apiKey: env("COUNTERSIGN_KEY") });
  const session = await cs.openTask({
    customerRef: env("COUNTERSIGN_CUSTOMER"),
    conversationId: `langchain-${Date.now()}`,
    allowedActions: ["issue_refund"],
    customerAssertion: env("COUNTERSIGN_ASSERTION"),
  });
  const { tools, close } = await langChainTools(session, { onCustomerPage: (url) => console.log(JSON.stringify({ page: url })) });
  const script = new RefundScript(env("COUNTERSIGN_ORDER"), Number(env("COUNTERSIGN_CENTS")));
  try {
    const agent = createReactAgent({ llm: new ScriptedChatModel(script), tools });
    const res = await agent.invoke({ messages: [{ role: "user", content: "My walnut desk lamp arrived damaged; please refund it." }] },
      { recursionLimit: 25 });
    const inv = lastInvocation(res.messages.filter((m) => m.getType() === "tool").map((m) => m.content));
    const last = res.messages[res.messages.length - 1];
    console.log(script.report(inv?.id ?? "", inv?.state ?? "", typeof last?.content === "string" ? last.content : ""));
  } finally {
    await close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
