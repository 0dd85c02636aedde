"""The refund scenario with the countersign package and a scripted stand-in for a model.

The host (this program) plays what an agent framework does: it opens the
task with the business's assertion (the model never holds it), runs the
tools the model calls (the proposal over the task's MCP server, as a
framework given session.mcp_url would), filters each result before the
model reads it (the
customer's confirmation page goes to the host's UI, here a line on
standard output), and waits for the outcome with the API's long poll, or
with an outcome webhook when COUNTERSIGN_WEBHOOK_LISTEN is set.

    COUNTERSIGN_URL=… COUNTERSIGN_KEY=csk_live_… COUNTERSIGN_ASSERTION=… \\
    COUNTERSIGN_CUSTOMER=… COUNTERSIGN_ORDER=… python3 examples/refund.py

It prints JSON lines: {"show_customer": url} when the customer must
confirm (what the host's UI would offer on their device), {"proposed": …}
once the refund is proposed, {"webhook_url": …} before it reads the
webhook's signing secret from standard input (webhook mode), and
{"settled": …} with the outcome, how it was waited for ("via"), the
webhook events the receiver took (webhook mode), what the customer was
told and everything the model was handed ("model_saw").
COUNTERSIGN_WAIT_SECONDS bounds the wait (90 by default).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from countersign import Countersign, OutcomeReceiver, take_customer_page  # noqa: E402


def emit(**line: Any) -> None:
    print(json.dumps(line), flush=True)


class ScriptedModel:
    """A stand-in for a model: it answers from a script and keeps every text it was handed.

    A real model is sent the same texts; the script reads them as a model
    would, taking the invocation's id, state and say from the results.
    """

    def __init__(self, order_id: str) -> None:
        self.order_id = order_id
        self.seen: List[str] = []
        self.step = 0

    def turn(self, text: str) -> Dict[str, Any]:
        """Reads text (a customer's message or a tool's result) and answers a tool call or a reply."""
        self.seen.append(text)
        self.step += 1
        if self.step == 1:
            return {"tool": "propose_issue_refund", "args": {"order_id": self.order_id, "amount_cents": 700,
                                                              "reason_code": "damaged",
                                                              "summary": "Refund $7.00 for the damaged lamp"}}
        result = json.loads(text)
        if self.step == 2:
            return {"reply": result["say"], "then": {"tool": "wait_for_outcome",
                                                      "args": {"invocation_id": result["id"], "state": result["state"]}}}
        return {"reply": result["say"]}


def main() -> int:
    env = os.environ.get
    cs = Countersign(env("COUNTERSIGN_URL", ""), env("COUNTERSIGN_KEY", ""))
    # The business's site handed the host this assertion for its signed-in
    # customer: it opens the task here and goes no further.
    session = cs.open_task(customer_ref=env("COUNTERSIGN_CUSTOMER", ""), conversation_id="example-%d" % time.time_ns(),
                           allowed_actions=["issue_refund"], customer_assertion=env("COUNTERSIGN_ASSERTION", ""))

    receiver: Optional[OutcomeReceiver] = None
    listen = env("COUNTERSIGN_WEBHOOK_LISTEN")
    if listen:
        # The endpoint an admin registers on /admin/assistants, which then
        # shows its signing secret once: COUNTERSIGN_WEBHOOK_SECRET, or the
        # first line of standard input when it is not set.
        host, _, port = listen.rpartition(":")
        receiver = OutcomeReceiver(env("COUNTERSIGN_WEBHOOK_SECRET") or None, host=host or "127.0.0.1", port=int(port or 0)).start()
        if not env("COUNTERSIGN_WEBHOOK_SECRET"):
            emit(webhook_url=receiver.url)
            receiver.use_secret(sys.stdin.readline().strip())
    model = ScriptedModel(env("COUNTERSIGN_ORDER", ""))
    customer_heard: List[str] = []

    def show_customer(url: str) -> None:
        # The host's UI: the customer's device offers the page; the model
        # is never given it.
        emit(show_customer=url)

    def run_tool(name: str, args: Dict[str, Any]) -> str:
        # What a framework does with each tool call: the task's MCP server
        # (session.mcp_url) runs the proposal; the wait runs here. Either
        # result is filtered before the model reads it.
        if name == "propose_issue_refund":
            result = take_customer_page(session.call_tool(name, args), show_customer)
            if result.get("isError"):
                raise RuntimeError("the proposal was refused: %s" % result.get("structuredContent"))
            return "\n".join(part["text"] for part in result.get("content", []) if part.get("type") == "text")
        if name == "wait_for_outcome":
            return json.dumps(take_customer_page(wait(args["invocation_id"]), show_customer))
        raise ValueError("the script called an unknown tool " + name)

    within = float(env("COUNTERSIGN_WAIT_SECONDS") or 90)
    via: List[str] = []

    def wait(invocation_id: str) -> Dict[str, Any]:
        if receiver is None:
            via.append("long_poll")
            return cs.settle(invocation_id, within=within)
        got = receiver.wait(invocation_id, within)
        if got is None:
            # No outcome came in time: say where it stands now.
            via.append("read")
            return cs.invocation(invocation_id)
        via.append("webhook:" + got[0])
        return got[1]

    answer = model.turn("Customer: my walnut desk lamp arrived damaged (order %s). Can I get $7 back?" % model.order_id)
    proposed: Dict[str, Any] = {}
    while True:
        if "reply" in answer:
            customer_heard.append(answer["reply"])
            if "then" not in answer:
                break
            answer = answer["then"]
        text = run_tool(answer["tool"], answer["args"])
        if answer["tool"] == "propose_issue_refund":
            proposed = json.loads(text)
            emit(proposed=proposed["id"], state=proposed["state"], mcp_url=session.mcp_url)
        answer = model.turn(text)
    final = cs.invocation(proposed["id"])
    line: Dict[str, Any] = {"settled": final["id"], "state": final["state"], "via": via, "customer_heard": customer_heard,
                            "model_saw": model.seen}
    if receiver is not None:
        line["webhook_events"] = [event for event, _ in receiver.events(final["id"])]
        receiver.close()
    emit(**line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
