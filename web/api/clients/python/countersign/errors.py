"""The API's refusals as Python exceptions.

Every refusal of the console's API has one body, ``{"code", "message",
"retryable", "hint"?, "fields"?, "details"?}`` (docs/api.md, "Errors").
``CountersignError`` carries it; its subclasses name the HTTP status so a
program can catch the kind of refusal it can do something about, and
branch on ``code`` for the rest.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Type


class CountersignError(Exception):
    """A refusal by the API: its status and its error body.

    ``code`` is for programs (``customer_not_vouched``, ``stale_version``…),
    ``message`` a sentence for people, ``hint`` what to do about it,
    ``fields`` names each field at fault with its fix, and ``details``
    carries what some codes add (``candidates``, ``bound``, ``limit``…).
    """

    def __init__(self, status: int, body: Mapping[str, Any], retry_after: Optional[int] = None) -> None:
        self.status = status
        self.body: Dict[str, Any] = dict(body)
        self.code: str = str(body.get("code") or "unknown_error")
        self.message: str = str(body.get("message") or "")
        self.hint: str = str(body.get("hint") or "")
        self.retryable: bool = bool(body.get("retryable", False))
        self.fields: Dict[str, str] = {str(k): str(v) for k, v in (body.get("fields") or {}).items()}
        self.details: Dict[str, Any] = dict(body.get("details") or {})
        self.retry_after = retry_after
        text = "%d %s: %s" % (status, self.code, self.message)
        if self.hint:
            text += " (" + self.hint + ")"
        super().__init__(text)


class BadRequest(CountersignError):
    """400: the request could not be read (malformed JSON, an unknown field…)."""


class Unauthorized(CountersignError):
    """401: the key is missing, unknown or revoked, or its assistant disabled."""


class Forbidden(CountersignError):
    """403: the assistant may not do this (customer_not_vouched, action_not_allowed…)."""


class NotFound(CountersignError):
    """404: no such object, or another assistant's (they look the same)."""


class Conflict(CountersignError):
    """409: the object is not in a state that allows it (stale_version, task_not_active…)."""


class TooLarge(CountersignError):
    """413: the body is too large."""


class Unprocessable(CountersignError):
    """422: a value is refused; ``fields`` names each one and its fix."""


class RateLimited(CountersignError):
    """429: over a limit; ``retry_after`` is the seconds to wait when the API says."""


class ServerError(CountersignError):
    """5xx: the console or a system behind it failed."""


class McpError(Exception):
    """A JSON-RPC error from the MCP server: its code, message and data.

    A tool's own refusal is not one (it is a result with isError and the
    API's error body); this is the protocol's (-32602 invalid params,
    -32601 unknown method…).
    """

    def __init__(self, code: int, message: str, data: Any) -> None:
        self.code = code
        self.message = message
        self.data = data
        super().__init__("MCP error %d: %s" % (code, message))


_BY_STATUS: Dict[int, Type[CountersignError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: TooLarge,
    422: Unprocessable,
    429: RateLimited,
}


def error_for(status: int, body: Any, retry_after: Optional[int] = None) -> CountersignError:
    """Returns the exception of the class for status, from the API's error body.

    A body that is not the API's error shape (a proxy's page, say) becomes a
    ``CountersignError`` with code ``unexpected_answer`` and the status.
    """
    if not isinstance(body, Mapping) or not isinstance(body.get("code"), str):
        body = {"code": "unexpected_answer", "message": "the console answered HTTP %d without its error body" % status,
                "retryable": status >= 500}
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else CountersignError)
    return cls(status, body, retry_after)
