"""Countersign for Python assistants, with the standard library only (Python 3.9 or later).

- ``Countersign(base_url, api_key).open_task(...)`` opens a task with the
  business's assertion outside the model and returns a ``TaskSession``
  bound to it (``mcp_url`` and ``mcp_headers`` for a framework's MCP
  client, or ``call_tool``, ``propose`` and ``read``);
- ``take_customer_page(result, show)`` takes the customer's confirmation
  page out of a tool result for the host's UI;
- ``Countersign.wait_for_outcome`` / ``settle`` long poll an invocation,
  and ``OutcomeReceiver`` takes outcome webhooks (Standard Webhooks);
- refusals raise ``CountersignError`` subclasses with the API's code,
  message, hint and fields.
"""

import sys

if sys.version_info < (3, 9):
    raise ImportError("countersign needs Python 3.9 or later")

from .client import MAX_WAIT_SECONDS, TERMINAL_STATES, Countersign, TaskSession
from .errors import (BadRequest, Conflict, CountersignError, Forbidden, McpError, NotFound, RateLimited, ServerError,
                     TooLarge, Unauthorized, Unprocessable, error_for)
from .pages import ASKED_ON_THEIR_DEVICE, take_customer_page
from .webhooks import BadSignature, NoSignature, OutcomeReceiver, TooOld, WebhookVerificationError, verify

__all__ = [
    "Countersign", "TaskSession", "TERMINAL_STATES", "MAX_WAIT_SECONDS",
    "CountersignError", "BadRequest", "Unauthorized", "Forbidden", "NotFound", "Conflict", "TooLarge",
    "Unprocessable", "RateLimited", "ServerError", "McpError", "error_for",
    "take_customer_page", "ASKED_ON_THEIR_DEVICE",
    "OutcomeReceiver", "verify", "WebhookVerificationError", "NoSignature", "TooOld", "BadSignature",
]
