// Checks takeCustomerPage without a console: the customer's page leaves an
// invocation and an MCP tool result (structured and text) for the host's
// UI, the model's copy keeps no trace of it, and other results pass as
// they are. Exits non-zero, naming the case, when one fails.
import { askedOnTheirDevice, linkWithheld, takeCustomerPage } from "../src/index.js";

declare const process: { exitCode?: number };
const page = "https://console.example.com/c/abc";
const failures: string[] = [];
const check = (name: string, ok: boolean): void => {
  if (!ok) failures.push(name);
};

const invocation = { id: "inv_1", state: "awaiting_confirmation", next: { kind: "confirm", url: page, message: "Send the link." } };
const shown: string[] = [];
const forModel = takeCustomerPage(invocation, (url) => shown.push(url));
check("an invocation's page goes to the host", shown.length === 1 && shown[0] === page);
check("the model's invocation has no page", !JSON.stringify(forModel).includes(page) && forModel.next.url === "");
check("the original is left as it was", invocation.next.url === page);
check("the model is told the customer was asked, not to send a link",
  forModel.next.message === askedOnTheirDevice && (forModel.next as { elicitation?: string }).elicitation === "sent");

const tool = { structuredContent: structuredClone(invocation), content: [{ type: "text", text: JSON.stringify(invocation) }] };
const fromTool: string[] = [];
const toolForModel = takeCustomerPage(tool, (url) => fromTool.push(url));
check("a tool result's page goes to the host", fromTool.length === 1 && fromTool[0] === page);
check("the model's tool result has no page", !JSON.stringify(toolForModel).includes(page));

const list = [{ type: "text", text: JSON.stringify(invocation) }];
const fromList: string[] = [];
const listForModel = takeCustomerPage(list, (url) => fromList.push(url));
check("a bare content list's page goes to the host", fromList.length === 1 && fromList[0] === page);
check("the model's content list has no page", !JSON.stringify(listForModel).includes(page));

const fromText: string[] = [];
const textForModel = takeCustomerPage(JSON.stringify(invocation), (url) => fromText.push(url));
check("JSON text's page goes to the host, the model's text has none", fromText.length === 1 && !textForModel.includes(page));

const nested = JSON.stringify({ type: "text", text: JSON.stringify(invocation) });
const fromNested: string[] = [];
const nestedForModel = takeCustomerPage(nested, (url) => fromNested.push(url));
check("JSON text within JSON text loses the page too", fromNested.length === 1 && !nestedForModel.includes("/c/abc"));

const other = "https://console.example.com/c/def";
const two = { invocations: [invocation, { ...invocation, id: "inv_3", next: { ...invocation.next, url: other } }] };
const fromTwo: string[] = [];
const twoForModel = takeCustomerPage(two, (url) => fromTwo.push(url));
check("each of two pages goes to the host", fromTwo.length === 2 && fromTwo.includes(page) && fromTwo.includes(other));
check("the model's list has neither page", !JSON.stringify(twoForModel).includes("/c/abc") && !JSON.stringify(twoForModel).includes("/c/def"));

const elicitation = { code: -32042, message: "URL elicitation required", data: { elicitations: [{ mode: "url", url: page, message: "Confirm" }] } };
const fromError: string[] = [];
const errorForModel = takeCustomerPage(elicitation, (url) => fromError.push(url));
check("a -32042 error's page goes to the host", fromError.length === 1 && fromError[0] === page);
check("the model's error has no page", !JSON.stringify(errorForModel).includes("/c/abc"));

const mentioned = { structuredContent: structuredClone(invocation), content: [{ type: "text", text: `Open ${page} to confirm.` }] };
const mentionForModel = takeCustomerPage(mentioned, () => undefined);
check("a mention of the page in other text is withheld",
  !JSON.stringify(mentionForModel).includes("/c/abc") && JSON.stringify(mentionForModel).includes(linkWithheld));

const approval = { id: "inv_2", state: "awaiting_approval", next: { kind: "approval", url: "", message: "" } };
const none: string[] = [];
check("a result without a page passes", JSON.stringify(takeCustomerPage(approval, (url) => none.push(url))) === JSON.stringify(approval) && none.length === 0);

if (failures.length > 0) {
  console.error(`takeCustomerPage: ${failures.join("; ")}`);
  process.exitCode = 1;
} else {
  console.log("takeCustomerPage: all checks passed");
}
