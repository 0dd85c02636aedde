package views

import (
	"net/url"
	"strings"
)

// Guidance is an action's policy guidance read as a small, safe subset of
// Markdown: paragraphs, bulleted and numbered lists, fenced code, and in
// the text `code`, *emphasis*, **strong** and [links](https://…). It is
// only ever data for templ components, which escape every piece of text:
// nothing of the source reaches the page as HTML, and a link whose address
// is not http, https, mailto or a path of this site is shown as text.
type Guidance struct {
	Blocks []GuidanceBlock
}

// GuidanceBlock is a paragraph ("p"), a list ("ul", "ol": Items), or a code
// block ("pre": Code).
type GuidanceBlock struct {
	Kind  string
	Spans []Span
	Items [][]Span
	Code  string
}

// Span is a run of text: plain (""), "code", "em", "strong" or "a" (with
// Href).
type Span struct {
	Kind string
	Text string
	Href string
}

// ParseGuidance reads src; it never fails: what it does not recognise is
// text.
func ParseGuidance(src string) Guidance {
	var g Guidance
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var para []string
	var list *GuidanceBlock
	flush := func() {
		if len(para) > 0 {
			g.Blocks = append(g.Blocks, GuidanceBlock{Kind: "p", Spans: parseSpans(strings.Join(para, " "))})
			para = nil
		}
		if list != nil {
			g.Blocks = append(g.Blocks, *list)
			list = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t")
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			flush()
			var code []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				code = append(code, lines[i])
			}
			g.Blocks = append(g.Blocks, GuidanceBlock{Kind: "pre", Code: strings.Join(code, "\n")})
		case trimmed == "":
			flush()
		case listItem(trimmed) != "":
			kind, text := listKind(trimmed), listItem(trimmed)
			if list != nil && list.Kind != kind || len(para) > 0 {
				flush()
			}
			if list == nil {
				list = &GuidanceBlock{Kind: kind}
			}
			list.Items = append(list.Items, parseSpans(text))
		case list != nil && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")):
			// A continuation line of the last item.
			last := &list.Items[len(list.Items)-1]
			*last = append(*last, parseSpans(" "+trimmed)...)
		default:
			if list != nil {
				flush()
			}
			para = append(para, strings.TrimLeft(trimmed, "# "))
		}
	}
	flush()
	return g
}

// listKind is "ul" for "- x" and "* x", "ol" for "1. x".
func listKind(line string) string {
	if line[0] == '-' || line[0] == '*' {
		return "ul"
	}
	return "ol"
}

// listItem is the text of a list item line, "" when line is not one.
func listItem(line string) string {
	if (strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "* ")) && len(line) > 2 {
		return strings.TrimSpace(line[2:])
	}
	n := 0
	for n < len(line) && n < 3 && line[n] >= '0' && line[n] <= '9' {
		n++
	}
	if n > 0 && n+1 < len(line) && (line[n] == '.' || line[n] == ')') && line[n+1] == ' ' {
		return strings.TrimSpace(line[n+2:])
	}
	return ""
}

// parseSpans splits inline text into spans; an opening mark without its
// closing one is text.
func parseSpans(s string) []Span {
	var out []Span
	var text strings.Builder
	emit := func(sp Span) {
		if text.Len() > 0 {
			out = append(out, Span{Text: text.String()})
			text.Reset()
		}
		out = append(out, sp)
	}
	for i := 0; i < len(s); {
		rest := s[i:]
		switch {
		case rest[0] == '`':
			if j := strings.IndexByte(rest[1:], '`'); j >= 0 {
				emit(Span{Kind: "code", Text: rest[1 : 1+j]})
				i += j + 2
				continue
			}
		case strings.HasPrefix(rest, "**"):
			if j := strings.Index(rest[2:], "**"); j > 0 {
				emit(Span{Kind: "strong", Text: rest[2 : 2+j]})
				i += j + 4
				continue
			}
		case (rest[0] == '*' || rest[0] == '_') && len(rest) > 1 && rest[1] != ' ' && (i == 0 || !isWordByte(s[i-1])):
			if j := strings.IndexByte(rest[1:], rest[0]); j > 0 && rest[j] != ' ' && (j+2 >= len(rest) || !isWordByte(rest[j+2])) {
				emit(Span{Kind: "em", Text: rest[1 : 1+j]})
				i += j + 2
				continue
			}
		case rest[0] == '[':
			if end := strings.Index(rest, "]("); end > 0 {
				if close := strings.IndexByte(rest[end+2:], ')'); close >= 0 {
					label, href := rest[1:end], strings.TrimSpace(rest[end+2:end+2+close])
					if safeHref(href) {
						emit(Span{Kind: "a", Text: label, Href: href})
					} else {
						emit(Span{Text: label + " (" + href + ")"})
					}
					i += end + 3 + close
					continue
				}
			}
		}
		text.WriteByte(s[i])
		i++
	}
	if text.Len() > 0 {
		out = append(out, Span{Text: text.String()})
	}
	return out
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// safeHref admits http, https and mailto addresses and paths of this site
// ("/…", not "//…"); javascript:, data: and the like are refused. A path
// with a backslash or a control byte is refused too: browsers read "/\x"
// and "/<TAB>/x" as "//x", another site.
func safeHref(href string) bool {
	if strings.HasPrefix(href, "/") {
		if strings.HasPrefix(href, "//") {
			return false
		}
		for i := 0; i < len(href); i++ {
			if b := href[i]; b == '\\' || b < 0x20 || b == 0x7f {
				return false
			}
		}
		u, err := url.Parse(href)
		return err == nil && u.Scheme == "" && u.Host == ""
	}
	u, err := url.Parse(href)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host != ""
	case "mailto":
		return true
	}
	return false
}
