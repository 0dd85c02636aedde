package mail

import "html"

// Page wraps body, HTML the caller escaped, in a mail's HTML document in
// language lang (a BCP 47 tag) written in direction dir ("ltr" or "rtl"):
// a mail reader lays an Arabic mail out right to left, and reads it aloud
// in its language.
func Page(lang, dir, title, body string) string {
	return `<!DOCTYPE html>
<html lang="` + html.EscapeString(lang) + `" dir="` + html.EscapeString(dir) + `"><head><meta charset="utf-8"><title>` +
		html.EscapeString(title) + `</title></head>
<body style="font-family:sans-serif;max-width:36em;margin:0 auto;padding:16px;color:#222">
` + body + `</body></html>
`
}
