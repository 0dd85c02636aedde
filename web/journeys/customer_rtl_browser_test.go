package journeys_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"countersign/internal/locale"
	"countersign/static"
	"countersign/web/browsertest"
	"countersign/web/webtest"
)

// These tests hold the customer's pages to their layout, not to their
// words: the pages are translated in the catalogues, so what is checked
// here is direction, geometry and isolation, whatever language the text
// is in.

// rtlPage is what the page of a browser says of its own layout, measured
// by layoutProbe.
type rtlPage struct {
	Lang, Dir, Direction string
	// HeadingStart and HeadingEnd are how far the text of the page's h1
	// stands from the start (right, in a right-to-left page) and from the
	// end of its content box, in pixels.
	HeadingStart, HeadingEnd float64
	// ButtonStart is how far the page's primary button stands from the
	// start of its row (-1: no such button).
	ButtonStart float64
	// BrandStart is how far the business's name stands from the start of
	// the header's bar.
	BrandStart float64
	// Lists are the lists whose markers' room (inline-start padding) is on
	// the wrong side, of the MarkedLists shown with markers; Values the
	// quote lines whose value is not at the end of its row beyond its
	// label, of the ValueRows lines whose label and value share one line.
	Lists, Values          []string
	MarkedLists, ValueRows int
	// NotIsolated are the values from the business's data (amounts,
	// references, dates, items) not isolated from the text around them;
	// OutOfOrder those, written in Latin or in digits, that the browser
	// drew in another order than they read.
	NotIsolated, OutOfOrder []string
	// Arrows are the texts of the page's own direction holding a
	// left-to-right arrow (→), which points back on a right-to-left page.
	Arrows []string
	// Overflowing are the text blocks whose content is wider than the
	// block; PageWider says the document is wider than the window.
	Overflowing []string
	PageWider   bool
}

// layoutProbe measures the current page for rtlPage. Distances are
// measured along the page's own direction, so 0 is "at the start".
const layoutProbe = `(() => {
	const rtl = getComputedStyle(document.documentElement).direction === "rtl";
	const box = el => {
		const r = el.getBoundingClientRect(), s = getComputedStyle(el);
		return {left: r.left + parseFloat(s.paddingLeft) + parseFloat(s.borderLeftWidth),
			right: r.right - parseFloat(s.paddingRight) - parseFloat(s.borderRightWidth)};
	};
	const textRect = el => { const rg = document.createRange(); rg.selectNodeContents(el); return rg.getBoundingClientRect(); };
	const fromStart = (inner, outer) => rtl ? outer.right - inner.right : inner.left - outer.left;
	const fromEnd = (inner, outer) => rtl ? inner.left - outer.left : outer.right - inner.right;
	const shown = el => el.offsetParent !== null && !el.closest(".visually-hidden, .skip, [hidden]");
	const name = el => (el.dataset.testid ? "[" + el.dataset.testid + "] " : el.tagName.toLowerCase() + "." + el.className + " ") +
		JSON.stringify(el.textContent.trim().slice(0, 60));
	const out = {Lang: document.documentElement.lang, Dir: document.documentElement.dir,
		Direction: getComputedStyle(document.body).direction, ButtonStart: -1, BrandStart: -1, ValueRows: 0, MarkedLists: 0,
		Lists: [], Values: [], NotIsolated: [], OutOfOrder: [], Arrows: [], Overflowing: []};

	const h1 = document.querySelector("main h1");
	if (h1) {
		const t = textRect(h1), b = box(h1);
		out.HeadingStart = fromStart(t, b); out.HeadingEnd = fromEnd(t, b);
	}
	const button = [...document.querySelectorAll("main .actions button[type=submit]:not(.secondary)")].find(shown);
	if (button) { out.ButtonStart = fromStart(button.getBoundingClientRect(), box(button.closest(".actions"))); }
	const brand = document.querySelector(".site-header .brand");
	if (brand) { out.BrandStart = fromStart(brand.getBoundingClientRect(), box(brand.closest(".bar"))); }

	for (const l of document.querySelectorAll("main ul, main ol")) {
		const s = getComputedStyle(l);
		if (!shown(l) || s.listStyleType === "none") continue;
		out.MarkedLists++;
		const start = parseFloat(rtl ? s.paddingRight : s.paddingLeft), end = parseFloat(rtl ? s.paddingLeft : s.paddingRight);
		if (!(start > 0 && end === 0)) out.Lists.push(name(l) + " padding start " + start + " end " + end);
	}
	for (const row of document.querySelectorAll(".quote-lines > div")) {
		const dt = row.querySelector(":scope > dt"), dd = row.querySelector(":scope > dd");
		if (!dt || !dd || !shown(dt) || !shown(dd)) continue;
		const a = dt.getBoundingClientRect(), v = textRect(dd);
		if (v.top >= a.bottom || a.top >= v.bottom) continue; // wrapped: the value is on a line of its own
		out.ValueRows++;
		// The value's text, not its box: a box can reach the row's end
		// while its text sits against the label.
		if (Math.abs(fromEnd(v, box(row))) > 1 || fromStart(v, a) < a.width - 1) out.Values.push(name(row));
	}

	// A value is isolated when it is a <bdi>, takes its direction from its
	// own text (unicode-bidi: plaintext), or sits in an inline box that
	// isolates, inside its block; or when its text is wrapped in
	// Unicode's isolates (FSI, LRI or RLI … PDI). A block's own isolate
	// says nothing: browsers give every block one, in the page's direction.
	const isolated = el => {
		if (/^[\u2066-\u2068][^]*\u2069$/.test(el.textContent.trim())) return true;
		for (let e = el; e && e !== document.body; e = e.parentElement) {
			const s = getComputedStyle(e);
			if (e.tagName === "BDI" || s.unicodeBidi === "plaintext" || s.unicodeBidi === "isolate-override") return true;
			if (!s.display.startsWith("inline")) return false;
			if (s.unicodeBidi === "isolate") return true;
		}
		return false;
	};
	// The order a value is drawn in: the centres of its characters, in
	// reading order, go one way for a value read left to right.
	const strong = /[A-Za-z\u00c0-\u024f\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]/;
	const drawnInOrder = el => {
		const text = el.textContent, first = text.match(strong);
		if (first && !/[A-Za-z\u00c0-\u024f]/.test(first[0])) return true; // a right-to-left value: not measured here
		const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
		const xs = [];
		for (let n = walker.nextNode(); n; n = walker.nextNode()) {
			for (let i = 0; i < n.data.length; i++) {
				if (/[\s\u200e\u200f\u061c\u2066-\u2069]/.test(n.data[i])) continue;
				const rg = document.createRange(); rg.setStart(n, i); rg.setEnd(n, i + 1);
				const r = rg.getBoundingClientRect();
				if (r.width > 0) xs.push({x: (r.left + r.right) / 2, y: Math.round(r.top)});
			}
		}
		for (let i = 1; i < xs.length; i++) {
			if (xs[i].y === xs[i - 1].y && xs[i].x < xs[i - 1].x) return false;
		}
		return true;
	};
	const values = '[data-testid="line-to"], [data-testid="line-from"], [data-testid="object-reference"], [data-testid="object-date"], ' +
		'[data-testid="object-item"], [data-testid="reference"], [data-testid="receipt-reference"], [data-testid="receipt-done"], ' +
		'[data-testid="receipt-verified"], [data-testid="row-reference"], [data-testid="row-amount"], [data-testid="row-items"]';
	for (const el of document.querySelectorAll(values)) {
		if (!shown(el)) continue;
		if (!isolated(el)) out.NotIsolated.push(name(el));
		if (!drawnInOrder(el)) out.OutOfOrder.push(name(el));
	}

	const texts = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n = texts.nextNode(); n; n = texts.nextNode()) {
		const el = n.parentElement;
		if (!/[\u2192\u27f6\u21d2]/.test(n.data) || !el || el.closest("script, style")) continue;
		let own = true;
		for (let e = el; e && e !== document.body; e = e.parentElement) {
			if (e.tagName === "BDI" || getComputedStyle(e).unicodeBidi === "plaintext") { own = false; break; }
		}
		if (rtl && own) out.Arrows.push(name(el));
	}

	out.PageWider = document.documentElement.scrollWidth > window.innerWidth;
	for (const el of document.body.querySelectorAll("*")) {
		const s = getComputedStyle(el);
		if (!shown(el) || s.display.startsWith("inline") || s.display === "contents" || el.clientWidth === 0) continue;
		if (el.scrollWidth > el.clientWidth + 1) out.Overflowing.push(name(el) + " " + el.scrollWidth + " > " + el.clientWidth);
		const r = el.getBoundingClientRect();
		if (r.left < -1 || r.right > window.innerWidth + 1) out.Overflowing.push(name(el) + " outside the window");
	}
	return out;
})()`

// measure is the layout of the page of ctx, at the window's current size.
func measure(t *testing.T, ctx context.Context) rtlPage {
	t.Helper()
	p, err := chromedp.Run(ctx, chromedp.Evaluate[rtlPage](layoutProbe))
	if err != nil {
		t.Fatalf("measure the page: %v", err)
	}
	return p
}

// measureBroken is the layout of the page of ctx with rules added at the
// end of its own style sheet, taken back afterwards. The rules go in
// through the CSSOM: the pages' Content-Security-Policy refuses a <style>
// element a script adds, and the page would be measured unbroken.
func measureBroken(t *testing.T, ctx context.Context, rules ...string) rtlPage {
	t.Helper()
	rulesJSON, err := json.Marshal(rules)
	if err != nil {
		t.Fatal(err)
	}
	sheet := fmt.Sprintf(`[...document.styleSheets].find(s => s.href && new URL(s.href).pathname === %q)`, static.URL("app.css"))
	add := `(() => { const s = ` + sheet + `; if (!s) return false;
		for (const r of ` + string(rulesJSON) + `) s.insertRule(r, s.cssRules.length);
		return true; })()`
	if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](add)); err != nil || !ok {
		t.Fatalf("add rules to app.css: found %v, %v", ok, err)
	}
	p := measure(t, ctx)
	undo := fmt.Sprintf(`(() => { const s = %s; for (let i = 0; i < %d; i++) s.deleteRule(s.cssRules.length - 1); return true; })()`,
		sheet, len(rules))
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](undo)); err != nil {
		t.Fatalf("take the rules back: %v", err)
	}
	return p
}

// checkProbeMeasures holds layoutProbe to measuring the request's page of
// ctx, where checks that find nothing to measure pass: it must find the
// primary button, lists with markers and quote lines whose label and value
// share a line, and flag each of them when app.css is broken: lists'
// room on the left, quote rows laid out left to right, a value's text
// against its label.
func checkProbeMeasures(t *testing.T, ctx context.Context) {
	t.Helper()
	p := measure(t, ctx)
	if p.ButtonStart < 0 {
		t.Errorf("no primary button found: the check of its side measures nothing")
	}
	if p.MarkedLists == 0 {
		t.Errorf("no list with markers found: the check of their side measures nothing")
	}
	if p.ValueRows == 0 {
		t.Errorf("no quote line has its label and value on one line: the check of their sides measures nothing")
	}
	lists := func(p rtlPage) (int, int) { return len(p.Lists), p.MarkedLists }
	values := func(p rtlPage) (int, int) { return len(p.Values), p.ValueRows }
	for _, broken := range []struct {
		rules   []string
		flagged func(rtlPage) (flagged, of int)
	}{
		{[]string{"main :is(ul, ol) { padding-inline-start: 0 !important; padding-left: 1.5rem !important }"}, lists},
		{[]string{".quote-lines > div { direction: ltr }"}, values},
		{[]string{".quote-lines > div { display: grid; grid-template-columns: auto 1fr }", ".quote-lines dd { margin: 0; text-align: start }"}, values},
	} {
		if flagged, of := broken.flagged(measureBroken(t, ctx, broken.rules...)); of == 0 || flagged != of {
			t.Errorf("with %q the probe flags %d of %d; want all", broken.rules, flagged, of)
		}
	}
}

var (
	wideWindow  = chromedp.EmulateViewport(1280, 900)
	phoneWindow = chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)
)

// checkMirrored holds the page of ctx to a right-to-left layout at desktop
// and phone width: dir="rtl" on the document, the heading, the primary
// button and the business's name at the right, list markers' room on the
// right, a quote line's value at its row's left end, the business's values
// isolated and drawn in their own order, nothing wider than a phone, and
// axe-core clean (every impact). It saves a screenshot at each width.
func checkMirrored(t *testing.T, ctx context.Context, page, shot string) {
	t.Helper()
	for _, w := range []struct {
		name     string
		viewport chromedp.Action[chromedp.Void]
	}{{"desktop", wideWindow}, {"phone", phoneWindow}} {
		if err := chromedp.Do(ctx, w.viewport); err != nil {
			t.Fatal(err)
		}
		at := page + " at " + w.name + " width"
		p := measure(t, ctx)
		if p.Lang != "ar" || p.Dir != "rtl" || p.Direction != "rtl" {
			t.Errorf("%s: <html lang=%q dir=%q>, body's direction %q; want ar, rtl", at, p.Lang, p.Dir, p.Direction)
		}
		if p.HeadingStart > 1.5 || (w.name == "desktop" && p.HeadingEnd < 2) {
			t.Errorf("%s: the heading's text stands %.1f px from the right and %.1f px from the left of its box; want it at the right",
				at, p.HeadingStart, p.HeadingEnd)
		}
		if p.ButtonStart > 1.5 {
			t.Errorf("%s: the primary button stands %.1f px from the right of its row; want it at the right", at, p.ButtonStart)
		}
		if p.BrandStart < 0 || p.BrandStart > 1.5 {
			t.Errorf("%s: the business's name stands %.1f px from the right of the header; want it at the right", at, p.BrandStart)
		}
		for _, what := range p.Lists {
			t.Errorf("%s: list %s: the markers' room is not on the right", at, what)
		}
		for _, what := range p.Values {
			t.Errorf("%s: quote line %s: its value is not at the left end of its row, beyond its label", at, what)
		}
		for _, what := range p.NotIsolated {
			t.Errorf("%s: value %s is not isolated (<bdi>, unicode-bidi) from the text around it", at, what)
		}
		for _, what := range p.OutOfOrder {
			t.Errorf("%s: value %s is drawn in another order than it reads", at, what)
		}
		for _, what := range p.Arrows {
			t.Errorf("%s: %s points → on a page read from right to left", at, what)
		}
		if w.name == "phone" {
			if p.PageWider {
				t.Errorf("%s: the page is wider than the phone", at)
			}
			for _, what := range p.Overflowing {
				t.Errorf("%s: %s overflows", at, what)
			}
		}
		if v := browsertest.AxeAll(t, ctx); len(v) > 0 {
			t.Errorf("%s: %d accessibility violations: %+v", at, len(v), v)
		}
		browsertest.Screenshot(t, ctx, shot+"-"+w.name+".png")
	}
	if err := chromedp.Do(ctx, wideWindow); err != nil {
		t.Fatal(err)
	}
}

// proveWithCode opens link in the browser of ctx and shows it is Jordan
// with the code the page mails, up to the decision's buttons.
func proveWithCode(t *testing.T, ctx context.Context, b *webtest.Stack, link string) {
	t.Helper()
	browse(t, ctx, "ask for a code", wideWindow,
		chromedp.Navigate(b.Server.URL+link),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="send-code"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid="send-code"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#code`)),
	)
	mails := b.Mail.Sent()
	browse(t, ctx, "enter the code",
		chromedp.SendKeys(chromedp.CSS(`#code`), webtest.CodeIn.FindString(mails[len(mails)-1].Body)),
		chromedp.Click(chromedp.CSS(`[data-testid="verify"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="confirm"]`)),
	)
}

// TestBrowserArabicRequestAndReceipt: Jordan, who chose Arabic on the
// language switch (its cookie), reads the refund's page and, once
// confirmed and done, its receipt and My requests, in headless Chromium at
// 1280 and 390 px:
// both pages are right to left and mirrored, their amounts, references
// and dates isolated and in their own order, nothing wider than a phone,
// axe-core clean. Screenshots: customer-ar-*.png.
func TestBrowserArabicRequestAndReceipt(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithTypedCodes(), webtest.WithShop(), webtest.WithCustomerStage())
	_, link := b.PendingRefund(t)
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	go b.Control.RunDispatcher(runCtx, 50*time.Millisecond)

	ctx := browsertest.New(t, 150*time.Second)
	if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: locale.CookieName, Value: "ar", URL: b.Server.URL}); err != nil {
		t.Fatal(err)
	}
	proveWithCode(t, ctx, b, link)
	checkMirrored(t, ctx, "the refund's page", "customer-ar-request")
	checkProbeMeasures(t, ctx)

	browse(t, ctx, "confirm and wait for the receipt",
		chromedp.Click(chromedp.CSS(`[data-testid="confirm"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="receipt-who"]`)),
	)
	if n := countOnPage(t, ctx, `[data-testid="receipt-reference"]`); n != 1 {
		t.Fatalf("the receipt shows %d references, want 1", n)
	}
	checkMirrored(t, ctx, "the receipt", "customer-ar-receipt")

	browse(t, ctx, "see your requests",
		chromedp.Click(chromedp.CSS(`[data-testid="my-requests-link"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="request-row"]`)),
	)
	if n := countOnPage(t, ctx, `[data-testid="row-amount"], [data-testid="row-reference"]`); n == 0 {
		t.Fatal("My requests shows no amount nor reference to hold to their direction")
	}
	checkMirrored(t, ctx, "My requests", "customer-ar-my-requests")
}

// TestBrowserPseudoLocaleFitsAPhone: in the pseudo-locale (every
// catalogue text accented and about 40% longer, as German and French run),
// the link page, the request page and its receipt fit a 390 px phone: no
// text block is wider inside than its box, the document is no wider than
// the window. Screenshots: customer-pseudo-*.png.
func TestBrowserPseudoLocaleFitsAPhone(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithTypedCodes(), webtest.WithShop(), webtest.WithCustomerStage(), webtest.WithPseudoLocale())
	_, link := b.PendingRefund(t)
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	go b.Control.RunDispatcher(runCtx, 50*time.Millisecond)

	ctx := browsertest.New(t, 150*time.Second)
	fits := func(page, shot string) {
		t.Helper()
		if err := chromedp.Do(ctx, phoneWindow); err != nil {
			t.Fatal(err)
		}
		p := measure(t, ctx)
		if p.Lang != locale.Pseudo.String() {
			t.Errorf("%s: <html lang=%q>; want the pseudo-locale's %q", page, p.Lang, locale.Pseudo)
		}
		if p.PageWider {
			t.Errorf("%s: the page is wider than the phone", page)
		}
		for _, what := range p.Overflowing {
			t.Errorf("%s: %s overflows", page, what)
		}
		browsertest.Screenshot(t, ctx, shot+".png")
		if err := chromedp.Do(ctx, wideWindow); err != nil {
			t.Fatal(err)
		}
	}
	browse(t, ctx, "open the link", wideWindow,
		chromedp.Navigate(b.Server.URL+link),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="send-code"]`)),
	)
	fits("the link page", "customer-pseudo-link-phone")
	proveWithCode(t, ctx, b, link)
	fits("the request page", "customer-pseudo-request-phone")
	browse(t, ctx, "confirm and wait for the receipt",
		chromedp.Click(chromedp.CSS(`[data-testid="confirm"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="receipt-who"]`)),
	)
	fits("the receipt", "customer-pseudo-receipt-phone")
}
