"""Outcome webhooks: a Standard Webhooks receiver with http.server and hmac.

The console posts each outcome of the assistant's invocations to the
endpoint an admin registered (docs/api.md, "Outcome webhooks"), signed as
Standard Webhooks (standardwebhooks.com) specifies: ``webhook-signature`` is
``v1,`` and the base64 HMAC-SHA256, keyed with the base64-decoding of the
secret after ``whsec_``, of ``<webhook-id>.<webhook-timestamp>.<raw body>``.
``verify`` checks one delivery; ``OutcomeReceiver`` serves an endpoint that
verifies each delivery, drops repeated ones (the same ``webhook-id``) and
lets the host wait for an invocation's outcome.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Mapping, Optional, Set, Tuple

#: How far a delivery's timestamp may be from the receiver's clock, in seconds.
DEFAULT_TOLERANCE = 300

#: The largest body the receiver reads.
MAX_BODY = 1 << 20

#: Events that end the wait for a write: a result, or a decision that ends it.
SETTLING_EVENTS = frozenset(("invocation.completed", "invocation.failed", "invocation.not_dispatched",
                             "invocation.unverified", "invocation.reconciled", "invocation.rejected",
                             "invocation.declined", "invocation.expired"))


class WebhookVerificationError(Exception):
    """A delivery that is not to be trusted; the receiver answers 401."""


class NoSignature(WebhookVerificationError):
    """A Standard Webhooks header is missing, or the timestamp is not a number."""


class TooOld(WebhookVerificationError):
    """The delivery was signed further from now than the tolerance, either way."""


class BadSignature(WebhookVerificationError):
    """No v1 signature of the list matches the body."""


def _header(headers: Any, name: str) -> str:
    value = headers.get(name)
    if value is None and isinstance(headers, Mapping):
        for key, v in headers.items():
            if key.lower() == name:
                value = v
                break
    return str(value or "")


def secret_key(secret: str) -> bytes:
    """The HMAC key of a signing secret: the base64 after whsec_."""
    raw = secret[len("whsec_"):] if secret.startswith("whsec_") else secret
    try:
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the signing secret is not base64 after whsec_") from None


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The webhook-signature value of a delivery: "v1," and the base64 HMAC-SHA256."""
    mac = hmac.new(secret_key(secret), ("%s.%d." % (message_id, timestamp)).encode() + body, hashlib.sha256)
    return "v1," + base64.b64encode(mac.digest()).decode()


def verify(secret: str, headers: Any, body: bytes, now: Optional[float] = None, tolerance: float = DEFAULT_TOLERANCE) -> None:
    """Checks a delivery on its raw body, before any JSON decoding.

    headers is any mapping with get (http.server's message, a dict); now is
    the receiver's clock in unix seconds. Raises NoSignature, TooOld or
    BadSignature; returns None when one v1 signature matches, compared in
    constant time.
    """
    message_id, ts, sigs = _header(headers, "webhook-id"), _header(headers, "webhook-timestamp"), _header(headers, "webhook-signature")
    if not message_id or not ts or not sigs:
        raise NoSignature("a webhook-id, webhook-timestamp or webhook-signature header is missing")
    try:
        signed_at = int(ts)
    except ValueError:
        raise NoSignature("webhook-timestamp %r is not a unix time" % ts) from None
    if now is None:
        now = time.time()
    if abs(now - signed_at) > tolerance:
        raise TooOld("signed %ds from now, more than the tolerance of %ds" % (now - signed_at, tolerance))
    want = sign(secret, message_id, signed_at, body)[len("v1,"):].encode()
    for sig in sigs.split():
        if sig.startswith("v1,") and hmac.compare_digest(want, sig[len("v1,"):].encode()):
            return
    raise BadSignature("no signature matches the body")


class OutcomeReceiver:
    """An outcome-webhook endpoint on http.server.

    Each delivery is verified with secret (401 otherwise, and it is not
    taken; with no secret yet every delivery is refused); a delivery whose webhook-id was taken before is answered 204 and
    dropped, since the console delivers at least once. Invocation events
    are kept by invocation id for wait; hand-off events by conversation.
    now is the clock signatures are checked against (time.time when None).
    """

    def __init__(self, secret: Optional[str], host: str = "127.0.0.1", port: int = 0,
                 now: Optional[Callable[[], float]] = None, tolerance: float = DEFAULT_TOLERANCE) -> None:
        self._cond = threading.Condition()
        self._secret: Optional[str] = None
        if secret is not None:
            self.use_secret(secret)
        self._now = now or time.time
        self._tolerance = tolerance
        self._seen: Set[str] = set()
        self._events: Dict[str, List[Tuple[str, Dict[str, Any]]]] = {}
        self.handoffs: List[Dict[str, Any]] = []
        self.refused = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                status = receiver._take(self)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's name)
                pass

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._thread: Optional[threading.Thread] = None

    def use_secret(self, secret: str) -> None:
        """Verifies deliveries with secret from now on.

        Registering the endpoint (again) on /admin/assistants shows a new
        secret, which replaces the old one; a secret that is not whsec_ and
        base64 raises ValueError.
        """
        secret_key(secret)
        with self._cond:
            self._secret = secret

    @property
    def url(self) -> str:
        """The endpoint's address, to register as the assistant's outcome webhook."""
        host, port = self._server.server_address[:2]
        return "http://%s:%d/" % (host, port)

    def start(self) -> "OutcomeReceiver":
        """Serves deliveries on a thread of its own until close."""
        self._thread = threading.Thread(target=self._server.serve_forever, name="countersign-webhooks", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stops serving."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "OutcomeReceiver":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _take(self, req: BaseHTTPRequestHandler) -> int:
        try:
            length = int(req.headers.get("Content-Length") or "0")
        except ValueError:
            return 400
        if length < 0 or length > MAX_BODY:
            return 413
        body = req.rfile.read(length)
        with self._cond:
            secret = self._secret
        try:
            if secret is None:
                raise NoSignature("the receiver has no signing secret yet")
            verify(secret, req.headers, body, self._now(), self._tolerance)
        except WebhookVerificationError:
            with self._cond:
                self.refused += 1
            return 401
        try:
            payload = json.loads(body)
        except ValueError:
            return 400
        if not isinstance(payload, dict) or not isinstance(payload.get("event"), str):
            return 400
        delivery = _header(req.headers, "webhook-id")
        with self._cond:
            if delivery in self._seen:
                return 204
            self._seen.add(delivery)
            inv = payload.get("invocation")
            if isinstance(inv, dict) and isinstance(inv.get("id"), str):
                self._events.setdefault(inv["id"], []).append((payload["event"], inv))
            elif isinstance(payload.get("conversation"), dict):
                self.handoffs.append(payload)
            self._cond.notify_all()
        return 204

    def events(self, invocation_id: str) -> List[Tuple[str, Dict[str, Any]]]:
        """The events taken for an invocation so far, in arrival order, repeats dropped."""
        with self._cond:
            return list(self._events.get(invocation_id, []))

    def wait(self, invocation_id: str, timeout: float) -> Optional[Tuple[str, Dict[str, Any]]]:
        """Waits up to timeout seconds for an event that settles the invocation.

        Returns the event's name and the invocation as the delivery showed it,
        or None when none came in time.
        """
        def settled() -> Optional[Tuple[str, Dict[str, Any]]]:
            for event, inv in self._events.get(invocation_id, []):
                if event in SETTLING_EVENTS:
                    return event, inv
            return None

        with self._cond:
            self._cond.wait_for(lambda: settled() is not None, timeout)
            return settled()


__all__ = ["verify", "sign", "secret_key", "OutcomeReceiver", "WebhookVerificationError", "NoSignature", "TooOld",
           "BadSignature", "DEFAULT_TOLERANCE", "SETTLING_EVENTS"]
