"""The customer's confirmation page, kept out of the model.

A proposal that waits for the customer carries their single-use
confirmation link in ``next.url``. A model given it copies it into the chat,
where it does not belong: the host's own UI should offer it on the
customer's device. Over MCP a client that declares URL elicitation gets the
page from the server instead; ``take_customer_page`` does the same for a
host that does not: it filters a tool result before the model sees it.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Callable, List

#: What the model is told instead of the link: that the customer was asked
#: on their own device, and what to do meanwhile.
ASKED_ON_THEIR_DEVICE = ("The customer was asked to confirm on their own device: the confirmation page was handed to their "
                         "app (you do not see the link). Nothing happens until they confirm there, after proving who they "
                         "are. Tell them so, then wait for the outcome.")

#: What stands in the model's copy wherever the link appeared in other text.
LINK_WITHHELD = "(the confirmation page, given to the customer's app)"

#: The JSON-RPC error a 2025-11-25 MCP server answers when it wants a URL elicitation.
URL_ELICITATION_REQUIRED = -32042


def take_customer_page(result: Any, show: Callable[[str], None]) -> Any:
    """Returns the model's copy of a tool result, with the customer's page given to show.

    result may be an invocation (the API's JSON, a dict), an MCP tool
    result (``structuredContent`` and ``content`` text parts carrying one),
    a JSON text of either, or a JSON-RPC error -32042 (its
    ``data.elicitations``). Each confirmation page found is passed to show
    (the host's UI callback) once; the copy has next.url empty,
    next.elicitation "sent" and next.message ASKED_ON_THEIR_DEVICE, and
    no trace of the link anywhere else. Anything without a page comes back
    equal to result. result itself is never changed.
    """
    if isinstance(result, str):
        try:
            decoded = json.loads(result)
        except ValueError:
            return result
        if not isinstance(decoded, (dict, list)):
            return result
        filtered = take_customer_page(decoded, show)
        return result if filtered == decoded else json.dumps(filtered)
    if not isinstance(result, (dict, list)):
        return result
    out = copy.deepcopy(result)
    pages: List[str] = []
    _strip(out, pages)
    if not pages:
        return out
    for page in pages:
        show(page)
    return _scrub(out, pages)


def _strip(value: Any, pages: List[str]) -> bool:
    """Takes every page out of value, in place, lists it in pages, and says whether it took one."""
    if isinstance(value, list):
        return any([_strip(item, pages) for item in value])
    if not isinstance(value, dict):
        return False
    took = False
    nxt = value.get("next")
    if isinstance(nxt, dict) and nxt.get("kind") == "confirm" and nxt.get("url"):
        _add(pages, nxt["url"])
        took = True
        nxt["url"] = ""
        nxt["elicitation"] = "sent"
        nxt["message"] = ASKED_ON_THEIR_DEVICE
    err = value.get("error")
    if isinstance(err, dict) and err.get("code") == URL_ELICITATION_REQUIRED and isinstance(err.get("data"), dict):
        for e in err["data"].get("elicitations") or []:
            if isinstance(e, dict) and e.get("mode") == "url" and e.get("url"):
                _add(pages, e["url"])
                took = True
                e["url"] = ""
    structured = value.get("structuredContent")
    if isinstance(structured, (dict, list)):
        took = _strip(structured, pages) or took
    content = value.get("content")
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
            try:
                decoded = json.loads(part["text"])
            except ValueError:
                continue
            if _strip(decoded, pages):
                took = True
                part["text"] = json.dumps(decoded)
    for key, child in value.items():
        if key not in ("next", "error", "structuredContent", "content"):
            took = _strip(child, pages) or took
    return took


def _add(pages: List[str], page: str) -> None:
    if page not in pages:
        pages.append(page)


def _scrub(value: Any, pages: List[str]) -> Any:
    """Replaces any remaining mention of a page in value's strings."""
    if isinstance(value, str):
        for page in pages:
            value = value.replace(page, LINK_WITHHELD)
        return value
    if isinstance(value, list):
        return [_scrub(v, pages) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v, pages) for k, v in value.items()}
    return value


__all__ = ["take_customer_page", "ASKED_ON_THEIR_DEVICE", "LINK_WITHHELD", "URL_ELICITATION_REQUIRED"]
