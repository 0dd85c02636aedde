"""The Standard Webhooks check and the receiver: signatures verified, repeats dropped."""

import json
import threading
import time
import unittest
import urllib.error
import urllib.request

from countersign.webhooks import BadSignature, NoSignature, OutcomeReceiver, TooOld, sign, verify

# The specification's published test vector (standard-webhooks, the same as
# internal/webhooks' TestSignStandardMatchesTheSpecsTestVector).
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
AT = 1614265330
BODY = b'{"test": 2432232314}'
SIG = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def headers(msg_id=MSG_ID, ts=AT, sig=SIG):
    return {"webhook-id": msg_id, "webhook-timestamp": str(ts), "webhook-signature": sig}


class VerifyTest(unittest.TestCase):
    def test_the_specs_vector(self) -> None:
        self.assertEqual(sign(SECRET, MSG_ID, AT, BODY), SIG)
        verify(SECRET, headers(), BODY, now=AT)

    def test_one_match_of_a_list_is_enough_and_case_does_not_matter(self) -> None:
        verify(SECRET, {"Webhook-Id": MSG_ID, "Webhook-Timestamp": str(AT), "Webhook-Signature": "v1,bm90IGl0 " + SIG}, BODY, now=AT)

    def test_refusals(self) -> None:
        other = "whsec_" + "YW5vdGhlciBrZXkgb2YgMjQgYnl0ZXMh"
        cases = {
            "a changed body": (BadSignature, headers(), b'{"test": 2432232315}', AT),
            "another id": (BadSignature, headers(msg_id="msg_other"), BODY, AT),
            "another key": (BadSignature, headers(sig=sign(other, MSG_ID, AT, BODY)), BODY, AT),
            "another scheme": (BadSignature, headers(sig="v2," + SIG[3:]), BODY, AT),
            "too old": (TooOld, headers(), BODY, AT + 301),
            "from the future": (TooOld, headers(), BODY, AT - 301),
            "no signature": (NoSignature, {"webhook-id": MSG_ID, "webhook-timestamp": str(AT)}, BODY, AT),
            "a timestamp that is no number": (NoSignature, headers(ts="soon"), BODY, AT),
        }
        for name, (error, hdrs, body, now) in cases.items():
            with self.subTest(name), self.assertRaises(error):
                verify(SECRET, hdrs, body, now=now)


def post(url, body, hdrs):
    req = urllib.request.Request(url, data=body, method="POST", headers=dict(hdrs, **{"Content-Type": "application/json"}))
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return res.status
    except urllib.error.HTTPError as err:
        return err.code


def delivery(event, inv_id, state, msg_id, ts=None):
    ts = int(time.time()) if ts is None else ts
    body = json.dumps({"event": event, "event_id": 1, "occurred_at": "2026-04-01T09:00:03Z",
                       "invocation": {"id": inv_id, "state": state}}).encode()
    return body, headers(msg_id=msg_id, ts=ts, sig=sign(SECRET, msg_id, ts, body))


class ReceiverTest(unittest.TestCase):
    def setUp(self) -> None:
        self.receiver = OutcomeReceiver(SECRET).start()
        self.addCleanup(self.receiver.close)

    def test_a_signed_outcome_ends_the_wait(self) -> None:
        approved = delivery("invocation.approved", "inv_1", "approved", "dlv_1")
        completed = delivery("invocation.completed", "inv_1", "completed", "dlv_2")
        waited = {}
        waiter = threading.Thread(target=lambda: waited.update(got=self.receiver.wait("inv_1", 10)))
        waiter.start()
        self.assertEqual(post(self.receiver.url, *approved), 204)
        self.assertEqual(post(self.receiver.url, *completed), 204)
        waiter.join(15)
        self.assertEqual(waited["got"][0], "invocation.completed")
        self.assertEqual(waited["got"][1]["state"], "completed")

    def test_a_repeated_delivery_is_dropped(self) -> None:
        body, hdrs = delivery("invocation.completed", "inv_2", "completed", "dlv_7")
        self.assertEqual(post(self.receiver.url, body, hdrs), 204)
        # A retry signs afresh but keeps its webhook-id.
        ts = int(time.time()) + 1
        self.assertEqual(post(self.receiver.url, body, dict(hdrs, **{"webhook-timestamp": str(ts),
                                                                      "webhook-signature": sign(SECRET, "dlv_7", ts, body)})), 204)
        self.assertEqual(len(self.receiver.events("inv_2")), 1)

    def test_a_forged_or_stale_delivery_is_refused_and_not_taken(self) -> None:
        body, hdrs = delivery("invocation.completed", "inv_3", "completed", "dlv_9")
        forged = body.replace(b'"completed"', b'"rejected"', 1)
        self.assertEqual(post(self.receiver.url, forged, hdrs), 401)
        stale_body, stale = delivery("invocation.completed", "inv_3", "completed", "dlv_10", ts=int(time.time()) - 600)
        self.assertEqual(post(self.receiver.url, stale_body, stale), 401)
        self.assertEqual(post(self.receiver.url, body, {}), 401)
        self.assertEqual(self.receiver.events("inv_3"), [])
        self.assertEqual(self.receiver.refused, 3)
        self.assertIsNone(self.receiver.wait("inv_3", 0.1))

    def test_without_a_secret_every_delivery_is_refused_until_one_is_given(self) -> None:
        receiver = OutcomeReceiver(None).start()
        self.addCleanup(receiver.close)
        body, hdrs = delivery("invocation.completed", "inv_4", "completed", "dlv_11")
        self.assertEqual(post(receiver.url, body, hdrs), 401)
        with self.assertRaises(ValueError):
            receiver.use_secret("whsec_not base64!")
        receiver.use_secret(SECRET)
        self.assertEqual(post(receiver.url, body, hdrs), 204)
        self.assertEqual(receiver.wait("inv_4", 5)[0], "invocation.completed")

    def test_a_test_event_is_taken_and_ignored(self) -> None:
        ts = int(time.time())
        body = b'{"event": "webhook.test", "event_id": 4712, "occurred_at": "2026-04-01T09:00:03Z", "test": true, "invocation": null}'
        self.assertEqual(post(self.receiver.url, body, headers(msg_id="dlv_t", ts=ts, sig=sign(SECRET, "dlv_t", ts, body))), 204)


if __name__ == "__main__":
    unittest.main()
