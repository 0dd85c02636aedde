"""The client against a stand-in API: what it sends, and the API's errors as typed exceptions."""

import json
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from countersign import Countersign, CountersignError, Forbidden, McpError, RateLimited, ServerError, Unauthorized, Unprocessable


class StandIn(BaseHTTPRequestHandler):
    """Answers what the test queued, and keeps each request."""

    answers = []
    seen = []

    def handle_one(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        StandIn.seen.append({"method": self.command, "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                             "body": json.loads(body) if body else None})
        status, headers, answer = StandIn.answers.pop(0)
        raw = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    do_GET = do_POST = handle_one

    def log_message(self, format, *args):  # noqa: A002
        pass


class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        StandIn.answers, StandIn.seen = [], []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.addCleanup(self.server.server_close)
        self.addCleanup(self.server.shutdown)
        self.cs = Countersign("http://127.0.0.1:%d/" % self.server.server_address[1], "csk_live_secret")

    def test_open_task_sends_the_assertion_and_binds_the_session(self) -> None:
        StandIn.answers.append((201, {}, {"id": "tsk_1", "state": "active"}))
        session = self.cs.open_task("jordan@example.com", "conv-1", ["issue_refund"], customer_assertion="payload.sig")
        sent = StandIn.seen[0]
        self.assertEqual((sent["method"], sent["path"]), ("POST", "/api/v1/tasks"))
        self.assertEqual(sent["headers"]["authorization"], "Bearer csk_live_secret")
        self.assertEqual(sent["body"], {"customer_ref": "jordan@example.com", "conversation_id": "conv-1",
                                        "allowed_actions": ["issue_refund"], "customer_assertion": "payload.sig"})
        self.assertEqual(session.mcp_url, self.cs.base_url + "/mcp?task=tsk_1")
        self.assertEqual(session.mcp_headers, {"Authorization": "Bearer csk_live_secret"})
        self.assertNotIn("csk_live_secret", repr(self.cs) + repr(session))

    def test_propose_and_settle_long_poll_with_the_state_seen(self) -> None:
        StandIn.answers += [(201, {}, {"id": "tsk_1"}),
                            (201, {}, {"id": "inv_1", "state": "awaiting_approval"}),
                            (200, {}, {"id": "inv_1", "state": "awaiting_approval"}),
                            (200, {"Countersign-Wait": "changed"}, {"id": "inv_1", "state": "approved"}),
                            (200, {"Countersign-Wait": "changed"}, {"id": "inv_1", "state": "completed"})]
        session = self.cs.open_task("c", "conv", ["issue_refund"])
        inv = session.propose("issue_refund", {"order_id": "ord_1", "amount_cents": 700}, summary="Refund", idempotency_key="k1")
        self.assertEqual(StandIn.seen[1]["headers"]["idempotency-key"], "k1")
        self.assertEqual(self.cs.settle(inv["id"], within=60)["state"], "completed")
        waits = [s["path"] for s in StandIn.seen[3:]]
        self.assertEqual(waits, ["/api/v1/invocations/inv_1?wait=30&state=awaiting_approval",
                                 "/api/v1/invocations/inv_1?wait=30&state=approved"])

    def test_wait_for_outcome_bounds_the_wait_and_reads_the_header(self) -> None:
        StandIn.answers.append((200, {"Countersign-Wait": "timeout"}, {"id": "inv_1", "state": "awaiting_approval"}))
        inv, why = self.cs.wait_for_outcome("inv_1", seconds=90)
        self.assertEqual((inv["state"], why), ("awaiting_approval", "timeout"))
        self.assertEqual(StandIn.seen[0]["path"], "/api/v1/invocations/inv_1?wait=30")
        # Less than a second still waits: wait=0 is a plain read, whose answer says no outcome.
        StandIn.answers.append((200, {"Countersign-Wait": "changed"}, {"id": "inv_1", "state": "rejected"}))
        self.cs.wait_for_outcome("inv_1", seconds=0.5)
        self.assertEqual(StandIn.seen[1]["path"], "/api/v1/invocations/inv_1?wait=1")

    def test_call_tool_posts_one_json_rpc_call_to_the_tasks_mcp_server(self) -> None:
        result = {"structuredContent": {"id": "inv_1"}, "content": [{"type": "text", "text": "{}"}], "isError": False}
        StandIn.answers += [(201, {}, {"id": "tsk_1"}),
                            (200, {}, {"jsonrpc": "2.0", "id": 1, "result": result}),
                            (200, {}, {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "bad arguments"}}),
                            (401, {}, {"code": "invalid_api_key", "message": "No.", "retryable": False})]
        session = self.cs.open_task("c", "conv", ["issue_refund"])
        self.assertEqual(session.call_tool("propose_issue_refund", {"order_id": "ord_1"}), result)
        sent = StandIn.seen[1]
        self.assertEqual((sent["method"], sent["path"]), ("POST", "/mcp?task=tsk_1"))
        self.assertEqual(sent["headers"]["authorization"], "Bearer csk_live_secret")
        self.assertEqual(sent["headers"]["mcp-protocol-version"], "2025-11-25")
        self.assertEqual(sent["body"], {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                        "params": {"name": "propose_issue_refund", "arguments": {"order_id": "ord_1"}}})
        with self.assertRaises(McpError) as got:
            session.call_tool("propose_issue_refund", {})
        self.assertEqual(got.exception.code, -32602)
        with self.assertRaises(Unauthorized):
            session.call_tool("list_orders")

    def test_refusals_are_typed_from_the_error_body(self) -> None:
        StandIn.answers += [
            (403, {}, {"code": "customer_not_vouched", "message": "No assertion.", "retryable": False, "hint": "Send one."}),
            (422, {}, {"code": "invalid", "message": "Bad.", "retryable": False, "fields": {"write_budget": "at most 20"}}),
            (429, {"Retry-After": "7"}, {"code": "rate_limited", "message": "Slow down.", "retryable": True, "details": {"limit": 120}}),
            (502, {}, b"<html>bad gateway</html>"),
        ]
        with self.assertRaises(Forbidden) as got:
            self.cs.open_task("c", "conv", ["issue_refund"])
        self.assertEqual((got.exception.status, got.exception.code, got.exception.hint), (403, "customer_not_vouched", "Send one."))
        with self.assertRaises(Unprocessable) as got:
            self.cs.open_task("c", "conv", ["issue_refund"], write_budget=99)
        self.assertEqual(got.exception.fields, {"write_budget": "at most 20"})
        with self.assertRaises(RateLimited) as got:
            self.cs.invocation("inv_1")
        self.assertEqual((got.exception.retry_after, got.exception.retryable, got.exception.details), (7, True, {"limit": 120}))
        with self.assertRaises(ServerError) as got:
            self.cs.invocation("inv_1")
        self.assertEqual((got.exception.status, got.exception.code), (502, "unexpected_answer"))
        self.assertIsInstance(got.exception, CountersignError)


if __name__ == "__main__":
    unittest.main()
