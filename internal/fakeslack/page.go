package fakeslack

import (
	"encoding/json"
	"html/template"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// pageMessage is a message as the page shows it.
type pageMessage struct {
	TS      string
	Lines   []string
	Buttons []string // action ids: approve, reject
	Link    string   // the "Edit in the console" URL
}

// pageView is a modal as the page shows it.
type pageView struct {
	Index   int
	Title   string
	Options []struct{ Value, Text string }
}

// slackLink is Slack's link markup, <url|label>, once HTML-escaped.
var slackLink = regexp.MustCompile(`&lt;(https?://[^|&\s]+)\|(.+?)&gt;`)

// slackEntities are Slack's own escapes (&amp; &lt; &gt;) once HTML-escaped
// again, put back to HTML's.
var slackEntities = strings.NewReplacer("&amp;amp;", "&amp;", "&amp;lt;", "&lt;", "&amp;gt;", "&gt;")

// codeSpan is Slack's inline code, `text` within a line.
var codeSpan = regexp.MustCompile("`([^`\n]*)`")

// linkify shows text as Slack would: escaped, with its links as links and
// its code spans as code (inside which nothing is a link).
func linkify(s string) template.HTML {
	var spans []string
	out := codeSpan.ReplaceAllStringFunc(template.HTMLEscapeString(s), func(m string) string {
		spans = append(spans, m[1:len(m)-1])
		return "\x00"
	})
	out = slackLink.ReplaceAllString(out, `<a href="$1">$2</a>`)
	for _, span := range spans {
		out = strings.Replace(out, "\x00", "<code>"+span+"</code>", 1)
	}
	return template.HTML(slackEntities.Replace(out)) //nolint:gosec // escaped first; only Slack's links become markup
}

var page = template.Must(template.New("page").Funcs(template.FuncMap{"linkify": linkify}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Fake Slack</title>
<style>body{font:15px system-ui,sans-serif;max-width:52rem;margin:1rem auto;padding:0 1rem}
.msg{border:1px solid #ccc;border-radius:6px;padding:.5rem 1rem;margin:.75rem 0}.muted{color:#555}
pre{white-space:pre-wrap;font:inherit;margin:.25rem 0}</style></head><body>
<h1>Fake Slack: #approvals</h1>
<p class="muted">The console posts its approval cards here. Clicks are sent to {{.URL}} signed with the signing secret,
as Slack signs them. Act as:</p>
<form id="who"><select name="user" form="who">{{range .Users}}<option value="{{.ID}}">{{.Name}} ({{.ID}}{{if .Email}}, {{.Email}}{{end}})</option>{{end}}</select></form>
{{range .Views}}<div class="msg"><h2>{{.Title}}</h2><form method="post" action="/submit">
<input type="hidden" name="view" value="{{.Index}}">
<select name="user">{{range $.Users}}<option value="{{.ID}}">{{.Name}}</option>{{end}}</select>
{{range .Options}}<p><label><input type="radio" name="chosen" value="{{.Value}}"> {{.Text}}</label></p>{{end}}
<p><label>Your own words <input name="own"></label></p><button>Reject</button></form></div>{{end}}
{{range .Messages}}<div class="msg">{{range .Lines}}<pre>{{linkify .}}</pre>{{end}}
{{if .Buttons}}<form method="post" action="/click"><input type="hidden" name="ts" value="{{.TS}}">
<select name="user">{{range $.Users}}<option value="{{.ID}}">{{.Name}}</option>{{end}}</select>
{{range .Buttons}}<button name="action" value="{{.}}">{{.}}</button> {{end}}{{if .Link}}<a href="{{.Link}}">Edit in the console</a>{{end}}</form>{{end}}
</div>{{else}}<p>No messages yet.</p>{{end}}
<h2>Answers to one person</h2>{{range .Ephemerals}}<p><b>{{.User}}</b>: {{linkify .Text}}</p>{{else}}<p class="muted">None.</p>{{end}}
<h2>Direct messages</h2>{{range .DMs}}<p><b>to {{.Channel}}</b>: {{linkify .Text}}</p>{{else}}<p class="muted">None.</p>{{end}}
</body></html>`))

func (s *Slack) servePage(w http.ResponseWriter, r *http.Request) {
	data := struct {
		URL        string
		Users      []User
		Messages   []pageMessage
		Views      []pageView
		Ephemerals []Ephemeral
		DMs        []Message
	}{URL: s.InteractionsURL, Users: s.Users(), Ephemerals: s.Ephemerals(), DMs: s.DMs()}
	slices.SortFunc(data.Users, func(a, b User) int { return strings.Compare(a.ID, b.ID) })
	msgs := s.Messages()
	slices.Reverse(msgs)
	for _, m := range msgs {
		data.Messages = append(data.Messages, renderMessage(m))
	}
	for i, v := range s.Views() {
		data.Views = append(data.Views, renderView(i, v))
	}
	slices.Reverse(data.Views)
	slices.Reverse(data.Ephemerals)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = page.Execute(w, data)
}

func (s *Slack) user(id string) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.users[id]
}

func (s *Slack) servePageClick(w http.ResponseWriter, r *http.Request) {
	for _, m := range s.Messages() {
		if m.TS == r.FormValue("ts") {
			if in, ok := s.Click(s.user(r.FormValue("user")), m, r.FormValue("action")); ok {
				_, _, _ = in.Send(s.InteractionsURL)
			}
		}
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Slack) servePageSubmit(w http.ResponseWriter, r *http.Request) {
	views := s.Views()
	for i, v := range views {
		if r.FormValue("view") == strconv.Itoa(i) {
			_, _, _ = s.Submit(s.user(r.FormValue("user")), v, r.FormValue("chosen"), r.FormValue("own")).Send(s.InteractionsURL)
			s.mu.Lock()
			s.views = slices.Delete(s.views, i, i+1)
			s.mu.Unlock()
			break
		}
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// renderMessage reads a message's blocks back into lines of text and its
// buttons.
func renderMessage(m Message) pageMessage {
	var blocks []struct {
		Type string `json:"type"`
		Text *struct {
			Text string `json:"text"`
		} `json:"text"`
		Fields []struct {
			Text string `json:"text"`
		} `json:"fields"`
		Elements []struct {
			ActionID string          `json:"action_id"`
			URL      string          `json:"url"`
			Text     json.RawMessage `json:"text"` // a string in a context, an object on a button
		} `json:"elements"`
	}
	out := pageMessage{TS: m.TS}
	_ = json.Unmarshal(m.Blocks, &blocks)
	for _, b := range blocks {
		if b.Text != nil {
			out.Lines = append(out.Lines, b.Text.Text)
		}
		for _, f := range b.Fields {
			out.Lines = append(out.Lines, strings.ReplaceAll(f.Text, "\n", ": "))
		}
		for _, e := range b.Elements {
			switch {
			case b.Type == "actions" && e.URL != "":
				out.Link = e.URL
			case b.Type == "actions":
				out.Buttons = append(out.Buttons, e.ActionID)
			default:
				var text string
				if json.Unmarshal(e.Text, &text) == nil && text != "" {
					out.Lines = append(out.Lines, text)
				}
			}
		}
	}
	if len(out.Lines) == 0 {
		out.Lines = []string{m.Text}
	}
	return out
}

// renderView reads a reject modal's reasons back.
func renderView(i int, v OpenedView) pageView {
	var view struct {
		Blocks []struct {
			Element *struct {
				Options []struct {
					Value string `json:"value"`
					Text  struct {
						Text string `json:"text"`
					} `json:"text"`
				} `json:"options"`
			} `json:"element"`
			Text *struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"blocks"`
	}
	_ = json.Unmarshal(v.View, &view)
	out := pageView{Index: i, Title: "Reject"}
	for _, b := range view.Blocks {
		if b.Text != nil {
			out.Title = "Reject " + strings.Trim(b.Text.Text, "*")
		}
		if b.Element != nil {
			for _, o := range b.Element.Options {
				out.Options = append(out.Options, struct{ Value, Text string }{o.Value, o.Text.Text})
			}
		}
	}
	return out
}
