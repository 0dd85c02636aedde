package journeys_test

import (
	"github.com/chromedp/chromedp"

	"countersign/web/webtest"
)

// browserSignIn is the browser's sign-in through the real form, from any page
// that shows it.
func browserSignIn(u webtest.User) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SendKeys(chromedp.CSS(`#email`), u.Email),
		chromedp.SendKeys(chromedp.CSS(`#password`), u.Password),
		chromedp.Submit(chromedp.CSS(`[data-testid="sign-in-form"]`)),
	)
}
