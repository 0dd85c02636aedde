package kit

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// LocalPath reports whether target is a path on this site that every
// browser reads the same way, so that redirecting to it cannot leave the
// site. Browsers drop tabs and newlines anywhere in a URL and read "\" as
// "/", so "/\t/evil.example" and "/\evil.example" both mean
// "//evil.example", another host. A target therefore must start with
// exactly one "/", hold no control, invisible or format characters and no
// backslash, and name no scheme, user or host; and it must still pass once
// percent-decoded ("/%2F%2Fevil.example", "/%5Cevil.example",
// "/%09/evil.example"), so that nothing that decodes it later can turn it
// into another site.
func LocalPath(target string) bool {
	if len(target) > 2048 || !plainPath(target) {
		return false
	}
	decoded, err := url.PathUnescape(target)
	if err != nil || !plainPath(decoded) {
		return false
	}
	u, err := url.Parse(target)
	return err == nil && u.Scheme == "" && u.Opaque == "" && u.User == nil && u.Host == ""
}

func plainPath(s string) bool {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == '\\' || r < 0x20 || r == 0x7f || !unicode.IsGraphic(r) {
			return false
		}
	}
	return true
}

// SafeNext is where to go after signing in: next when it is a local path
// (see localPath) other than the sign-in page itself, else the home page.
func SafeNext(next string) string {
	if !LocalPath(next) || strings.HasPrefix(next, "/sign-in") {
		return "/"
	}
	return next
}
