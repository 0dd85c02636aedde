package custkeys

import (
	"strings"

	"countersign/internal/locale"
)

// browserName starts the stored name of a passkey named after the
// browser that added it: "browser:<browser>/<device>", either part
// possibly empty. The words around the parts ("on", "Passkey") are the
// reader's language's, so they are written when the name is shown, not
// when it is kept.
const browserName = "browser:"

// DisplayName is the passkey's stored name as l's language writes it: a
// name made from the browser that added it in l's words ("Chrome on
// Mac", "Chrome sur Mac"), "Passkey" in l's words for one named after
// nothing, and any other name as it was typed. "Passkey", as names were
// stored before they were kept in parts, is written in l's words too.
func DisplayName(l *locale.Localizer, name string) string {
	parts, ok := strings.CutPrefix(name, browserName)
	if !ok {
		if name == "Passkey" || name == "" {
			return l.T("refusal.passkey_name.plain", nil)
		}
		return name
	}
	browser, device, _ := strings.Cut(parts, "/")
	p := locale.Params{"Browser": browser, "Device": device}
	switch {
	case browser != "" && device != "":
		return l.T("refusal.passkey_name.browser_on_device", p)
	case device != "":
		return l.T("refusal.passkey_name.on_device", p)
	case browser != "":
		return browser
	}
	return l.T("refusal.passkey_name.plain", nil)
}
