"""take_customer_page: the customer's page leaves a tool result for the host's UI, never the model's copy."""

import copy
import json
import unittest

from countersign import ASKED_ON_THEIR_DEVICE, take_customer_page

PAGE = "https://console.example.com/c/abc123"


def awaiting() -> dict:
    return {"id": "inv_1", "state": "awaiting_confirmation", "say": "Please check the details on the confirmation page.",
            "next": {"kind": "confirm", "url": PAGE, "message": "Send the customer the confirmation link.",
                     "proofs": ["link"]}}


class TakeCustomerPageTest(unittest.TestCase):
    def setUp(self) -> None:
        self.shown = []

    def take(self, result):
        return take_customer_page(result, self.shown.append)

    def test_an_invocations_page_goes_to_the_host(self) -> None:
        inv = awaiting()
        out = self.take(inv)
        self.assertEqual(self.shown, [PAGE])
        self.assertNotIn(PAGE, json.dumps(out))
        self.assertNotIn("/c/", json.dumps(out))
        self.assertEqual(out["next"]["url"], "")
        self.assertEqual(out["next"]["elicitation"], "sent")
        self.assertEqual(out["next"]["message"], ASKED_ON_THEIR_DEVICE)
        self.assertIn("their own device", out["next"]["message"])
        self.assertEqual(inv, awaiting(), "the original result was changed")

    def test_an_mcp_tool_results_page_goes_to_the_host(self) -> None:
        inv = awaiting()
        tool = {"structuredContent": inv, "content": [{"type": "text", "text": json.dumps(inv)}], "isError": False}
        out = self.take(tool)
        self.assertEqual(self.shown, [PAGE], "the page is shown once, though the result carries it twice")
        self.assertNotIn(PAGE, json.dumps(out))
        self.assertEqual(json.loads(out["content"][0]["text"])["next"]["elicitation"], "sent")

    def test_a_json_text_is_filtered_as_text(self) -> None:
        out = self.take(json.dumps(awaiting()))
        self.assertIsInstance(out, str)
        self.assertNotIn(PAGE, out)
        self.assertEqual(self.shown, [PAGE])

    def test_the_page_elsewhere_in_the_result_is_withheld_too(self) -> None:
        inv = awaiting()
        inv["summary"] = "Refund, confirm at " + PAGE
        tool = {"content": [{"type": "text", "text": json.dumps(inv)}, {"type": "text", "text": "Open " + PAGE + " now"}]}
        out = self.take(tool)
        self.assertNotIn(PAGE, json.dumps(out))
        self.assertEqual(self.shown, [PAGE])

    def test_a_url_elicitation_error_gives_its_page_to_the_host(self) -> None:
        err = {"jsonrpc": "2.0", "id": 3, "error": {"code": -32042, "message": "The customer must confirm this on a page.",
                                                      "data": {"elicitations": [{"mode": "url", "elicitationId": "inv_1",
                                                                                 "url": PAGE, "message": "Please check"}]}}}
        out = self.take(err)
        self.assertEqual(self.shown, [PAGE])
        self.assertNotIn(PAGE, json.dumps(out))

    def test_results_without_a_page_pass_as_they_are(self) -> None:
        for result in ({"id": "inv_2", "state": "awaiting_approval", "next": {"kind": "approval", "url": "", "message": "An agent decides."}},
                       {"id": "inv_3", "state": "completed", "next": {"kind": "none", "url": "", "message": ""}},
                       {"data": [{"order_id": "ord_1"}], "count": 1, "truncated": False},
                       "plain words", 42, None):
            before = copy.deepcopy(result)
            self.assertEqual(self.take(result), before)
        self.assertEqual(self.shown, [])


if __name__ == "__main__":
    unittest.main()
