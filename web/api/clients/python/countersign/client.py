"""The assistant's side of Countersign's API, with the standard library only.

``Countersign`` talks to the console with the assistant's API key:
``open_task`` sends the business's task assertion from here, outside the
model, and returns a ``TaskSession`` bound to the task (its MCP address and
headers for a framework, or ``propose`` for a host that calls the API);
``wait_for_outcome`` is one long poll and ``settle`` long polls until the
invocation has an outcome.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .errors import CountersignError, McpError, error_for

#: States nothing more happens in (a completed write's reversal aside).
TERMINAL_STATES = ("completed", "failed", "not_dispatched", "rejected", "expired", "reversed")

#: The longest one long poll waits, in seconds (the API's bound).
MAX_WAIT_SECONDS = 30

#: The MCP protocol version call_tool speaks (streamable HTTP, JSON answers).
MCP_PROTOCOL_VERSION = "2025-11-25"

Invocation = Dict[str, Any]
Task = Dict[str, Any]


class Countersign:
    """Countersign's assistant API at base_url, called with api_key.

    ``timeout`` bounds each request in seconds; a long poll gets its wait
    on top of it.
    """

    def __init__(self, base_url: str, api_key: str, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.timeout = timeout

    def __repr__(self) -> str:
        # The key stays out of logs and tracebacks.
        return "Countersign(%r)" % self.base_url

    def request(self, method: str, path: str, body: Any = None, headers: Optional[Mapping[str, str]] = None,
                wait: float = 0.0) -> Tuple[int, Dict[str, str], Any]:
        """Sends one request to /api/v1 + path and returns its status, headers and decoded JSON.

        A non-2xx answer raises the CountersignError subclass of its status,
        built from the API's error body.
        """
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + "/api/v1" + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self._api_key)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            req.add_header(name, value)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout + wait) as res:
                raw = res.read()
                return res.status, {k.lower(): v for k, v in res.headers.items()}, json.loads(raw or b"null")
        except urllib.error.HTTPError as err:
            raw = err.read()
            try:
                decoded = json.loads(raw)
            except ValueError:
                decoded = None
            retry = err.headers.get("Retry-After") if err.headers else None
            raise error_for(err.code, decoded, int(retry) if retry and retry.isdigit() else None) from None

    def open_task(self, customer_ref: str, conversation_id: str, allowed_actions: List[str],
                  customer_assertion: Optional[str] = None, write_budget: Optional[int] = None,
                  inflight_limit: Optional[int] = None, rate_per_minute: Optional[int] = None,
                  systems: Optional[List[str]] = None) -> "TaskSession":
        """Opens a task with the business's assertion, here and not in the model.

        customer_assertion is the single-use task assertion the business's
        site signed for this assistant and customer (docs/api.md, "Opening a
        task"). The TaskSession returned is bound to the task: hand the
        framework its mcp_url and mcp_headers, or propose through it.
        """
        body: Dict[str, Any] = {"customer_ref": customer_ref, "conversation_id": conversation_id,
                                "allowed_actions": list(allowed_actions)}
        for name, value in (("customer_assertion", customer_assertion), ("write_budget", write_budget),
                            ("inflight_limit", inflight_limit), ("rate_per_minute", rate_per_minute),
                            ("systems", systems)):
            if value is not None:
                body[name] = value
        _, _, task = self.request("POST", "/tasks", body)
        return TaskSession(self, self._api_key, task)

    def invocation(self, invocation_id: str) -> Invocation:
        """Reads an invocation as it stands."""
        return self.request("GET", "/invocations/" + urllib.parse.quote(invocation_id, safe=""))[2]

    def wait_for_outcome(self, invocation_id: str, seconds: float = 20, state: Optional[str] = None) -> Tuple[Invocation, str]:
        """One long poll: GET /invocations/{id}?wait=…&state=….

        It answers as soon as the invocation leaves state (the state it is in
        when None), at once when it is terminal, or after seconds (at most
        30, at least 1: a wait of 0 is a plain read, which answers no
        outcome) with the invocation as it is then. The second value is the
        Countersign-Wait header: "changed", "final" or "timeout".
        """
        wait = max(1, min(int(seconds), MAX_WAIT_SECONDS))
        query = {"wait": str(wait)}
        if state:
            query["state"] = state
        path = "/invocations/%s?%s" % (urllib.parse.quote(invocation_id, safe=""), urllib.parse.urlencode(query))
        _, headers, inv = self.request("GET", path, wait=wait)
        return inv, headers.get("countersign-wait", "timeout")

    def settle(self, invocation_id: str, within: float = 120.0) -> Invocation:
        """Long polls until the invocation is terminal or needs a person (unverified).

        It gives up after within seconds and returns the invocation as it is
        then; it never polls faster than the API's long poll answers.
        """
        end = time.monotonic() + within
        inv = self.invocation(invocation_id)
        while inv["state"] not in TERMINAL_STATES and inv["state"] != "unverified":
            left = end - time.monotonic()
            if left <= 0:
                break
            inv, _ = self.wait_for_outcome(invocation_id, seconds=min(max(1, int(left)), MAX_WAIT_SECONDS), state=inv["state"])
        return inv


class TaskSession:
    """A task opened outside the model, and what a framework needs to act in it."""

    def __init__(self, client: Countersign, api_key: str, task: Task) -> None:
        self.client = client
        self._api_key = api_key
        self.task = task

    def __repr__(self) -> str:
        return "TaskSession(%r)" % self.task.get("id")

    @property
    def task_id(self) -> str:
        """The task's id."""
        return str(self.task["id"])

    @property
    def mcp_url(self) -> str:
        """The MCP server of this task: its tools need no task_id and cannot reach another task."""
        return "%s/mcp?task=%s" % (self.client.base_url, urllib.parse.quote(self.task_id, safe=""))

    @property
    def mcp_headers(self) -> Dict[str, str]:
        """The headers an MCP client sends to mcp_url."""
        return {"Authorization": "Bearer " + self._api_key}

    def propose(self, action: str, args: Mapping[str, Any], summary: Optional[str] = None,
                system: Optional[str] = None, idempotency_key: Optional[str] = None) -> Invocation:
        """Proposes a write in this task: a dry run routed by policy; nothing changes yet."""
        body: Dict[str, Any] = {"action": action, "args": dict(args)}
        if summary is not None:
            body["summary"] = summary
        if system is not None:
            body["system"] = system
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        path = "/tasks/%s/invocations" % urllib.parse.quote(self.task_id, safe="")
        return self.client.request("POST", path, body, headers=headers)[2]

    def call_tool(self, name: str, arguments: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """Calls one of the task's MCP tools at mcp_url and returns its result.

        For a host without an MCP client library: one JSON-RPC tools/call
        over streamable HTTP (the server is stateless and answers JSON). The
        result is the MCP CallToolResult (structuredContent, content, isError);
        a tool's refusal is a result with isError, as MCP has it. Give it to
        take_customer_page before the model reads it. A JSON-RPC error raises
        McpError; a refusal of the request itself (a revoked key, the rate
        limit) the CountersignError of its status.
        """
        self._mcp_id = getattr(self, "_mcp_id", 0) + 1
        body = {"jsonrpc": "2.0", "id": self._mcp_id, "method": "tools/call",
                "params": {"name": name, "arguments": dict(arguments or {})}}
        req = urllib.request.Request(self.mcp_url, data=json.dumps(body).encode(), method="POST")
        for header, value in dict(self.mcp_headers, **{"Content-Type": "application/json",
                                                        "Accept": "application/json, text/event-stream",
                                                        "MCP-Protocol-Version": MCP_PROTOCOL_VERSION}).items():
            req.add_header(header, value)
        try:
            with urllib.request.urlopen(req, timeout=self.client.timeout + MAX_WAIT_SECONDS) as res:
                answer = json.loads(res.read() or b"null")
        except urllib.error.HTTPError as err:
            try:
                answer = json.loads(err.read())
            except ValueError:
                answer = None
            if not (isinstance(answer, dict) and isinstance(answer.get("error"), dict)):
                raise error_for(err.code, answer) from None
        if not isinstance(answer, dict):
            raise McpError(-32603, "the MCP server answered no JSON-RPC message", None)
        if isinstance(answer.get("error"), dict):
            e = answer["error"]
            raise McpError(int(e.get("code", -32603)), str(e.get("message", "")), e.get("data"))
        return answer.get("result") or {}

    def read(self, tool: str, args: Optional[Mapping[str, Any]] = None, system: Optional[str] = None) -> Dict[str, Any]:
        """Runs a read tool for the task's customer: {"data", "count", "truncated"}."""
        body: Dict[str, Any] = {"task": self.task_id, "args": dict(args or {})}
        if system is not None:
            body["system"] = system
        return self.client.request("POST", "/tools/" + urllib.parse.quote(tool, safe=""), body)[2]


__all__ = ["Countersign", "TaskSession", "CountersignError", "McpError", "TERMINAL_STATES", "MAX_WAIT_SECONDS",
           "MCP_PROTOCOL_VERSION"]
