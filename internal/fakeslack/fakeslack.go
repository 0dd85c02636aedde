// Package fakeslack stands in for Slack where the real one cannot be used:
// the tests and the demo (the console's -slack-fake). It serves the Web API
// methods the bot calls (chat.postMessage, chat.update, chat.postEphemeral,
// views.open, users.info) under /api/, checking the bot token and
// recording each call, and it sends interactions to the console signed as
// Slack signs them: X-Slack-Signature = "v0=" + hex HMAC-SHA256 of
// "v0:<timestamp>:<body>" under the signing secret. Its own page (GET /)
// shows the channel's messages with their buttons, for a person trying the
// demo.
package fakeslack

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Message is a message the bot posted, as it stands after its updates.
type Message struct {
	Channel string
	TS      string
	Text    string
	Blocks  json.RawMessage
	// Updates counts chat.update calls on it.
	Updates int
}

// Ephemeral is an answer shown to one user alone.
type Ephemeral struct {
	Channel, User, Text string
}

// OpenedView is a modal the bot opened in answer to a click.
type OpenedView struct {
	TriggerID string
	View      json.RawMessage
}

// User is a member of the fake workspace.
type User struct {
	ID, Team, Name, Email string
	// EmailConfirmed is what users.info says of the address.
	EmailConfirmed bool
}

// Slack is the fake workspace: one team, its users and channels.
type Slack struct {
	Token, Secret, Team string
	// Channel is the ID a channel given by name resolves to.
	Channel string
	// InteractionsURL is where the page's clicks are sent (the console's
	// interactivity request URL).
	InteractionsURL string

	mu         sync.Mutex
	seq        int
	messages   []*Message
	dms        []Message
	ephemerals []Ephemeral
	views      []OpenedView
	users      map[string]User
}

// New makes a workspace whose bot token and signing secret are the ones given.
func New(token, secret string) *Slack {
	return &Slack{Token: token, Secret: secret, Team: "T0FAKE", Channel: "C0APPROVALS", users: map[string]User{}}
}

// AddUser adds a member (Team defaults to the workspace's).
func (s *Slack) AddUser(u User) User {
	if u.Team == "" {
		u.Team = s.Team
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = u
	return u
}

// Users lists the members.
func (s *Slack) Users() []User {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]User, 0, len(s.users))
	for _, u := range s.users {
		out = append(out, u)
	}
	return out
}

// Messages returns the channel's messages, oldest first.
func (s *Slack) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, 0, len(s.messages))
	for _, m := range s.messages {
		out = append(out, *m)
	}
	return out
}

// DMs returns the direct messages the bot sent, oldest first.
func (s *Slack) DMs() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.dms...)
}

// Ephemerals returns the answers shown to one user, oldest first.
func (s *Slack) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ephemeral(nil), s.ephemerals...)
}

// Views returns the modals opened, oldest first.
func (s *Slack) Views() []OpenedView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]OpenedView(nil), s.views...)
}

// Handler serves the Web API under /api/ and the page at /.
func (s *Slack) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/{method}", s.serveAPI)
	mux.HandleFunc("GET /{$}", s.servePage)
	mux.HandleFunc("POST /click", s.servePageClick)
	mux.HandleFunc("POST /submit", s.servePageSubmit)
	return mux
}

func (s *Slack) serveAPI(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var form url.Values
	var js map[string]json.RawMessage
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(body, &js)
	} else {
		form, _ = url.ParseQuery(string(body))
	}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		token = form.Get("token")
	}
	answer := func(v map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	if token != s.Token {
		answer(map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	switch r.PathValue("method") {
	case "chat.postMessage":
		m := Message{Channel: form.Get("channel"), TS: fmt.Sprintf("%d.%06d", time.Now().Unix(), s.seq), Text: form.Get("text"),
			Blocks: json.RawMessage(form.Get("blocks"))}
		if strings.HasPrefix(m.Channel, "U") {
			s.dms = append(s.dms, m)
			answer(map[string]any{"ok": true, "channel": "D" + m.Channel, "ts": m.TS})
			return
		}
		if !strings.HasPrefix(m.Channel, "C") {
			m.Channel = s.Channel
		}
		s.messages = append(s.messages, &m)
		answer(map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS})
	case "chat.update":
		for _, m := range s.messages {
			if m.Channel == form.Get("channel") && m.TS == form.Get("ts") {
				m.Text, m.Blocks = form.Get("text"), json.RawMessage(form.Get("blocks"))
				m.Updates++
				answer(map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "text": m.Text})
				return
			}
		}
		answer(map[string]any{"ok": false, "error": "message_not_found"})
	case "chat.postEphemeral":
		s.ephemerals = append(s.ephemerals, Ephemeral{Channel: form.Get("channel"), User: form.Get("user"), Text: form.Get("text")})
		answer(map[string]any{"ok": true, "message_ts": fmt.Sprintf("%d.%06d", time.Now().Unix(), s.seq)})
	case "views.open":
		var trigger string
		_ = json.Unmarshal(js["trigger_id"], &trigger)
		s.views = append(s.views, OpenedView{TriggerID: trigger, View: js["view"]})
		answer(map[string]any{"ok": true, "view": map[string]any{"id": "V" + strconv.Itoa(s.seq)}})
	case "auth.test":
		answer(map[string]any{"ok": true, "team_id": s.Team, "user_id": "UBOT", "team": "Fake workspace"})
	case "users.info":
		u, ok := s.users[form.Get("user")]
		if !ok {
			answer(map[string]any{"ok": false, "error": "user_not_found"})
			return
		}
		answer(map[string]any{"ok": true, "user": map[string]any{"id": u.ID, "team_id": u.Team, "name": u.Name,
			"is_email_confirmed": u.EmailConfirmed, "profile": map[string]any{"email": u.Email, "real_name": u.Name}}})
	default:
		answer(map[string]any{"ok": false, "error": "unknown_method"})
	}
}

// Sign returns the headers Slack sends with body at time at.
func (s *Slack) Sign(body []byte, at time.Time) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(s.Secret))
	fmt.Fprintf(mac, "v0:%s:", ts)
	mac.Write(body)
	h := http.Header{}
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	return h
}

// Interaction is one signed request ready to send: the body and its
// headers, so a test may send it twice, alter it, or sign it otherwise.
type Interaction struct {
	Body   []byte
	Header http.Header
}

// Send posts the interaction to url and returns the status and body.
func (in Interaction) Send(url string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(in.Body))
	if err != nil {
		return 0, nil, err
	}
	req.Header = in.Header.Clone()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b, nil
}

// payload wraps an interaction's JSON as Slack sends it (a form with a
// payload field), signed now.
func (s *Slack) payload(v any) Interaction {
	js, _ := json.Marshal(v)
	body := []byte(url.Values{"payload": {string(js)}}.Encode())
	return Interaction{Body: body, Header: s.Sign(body, time.Now())}
}

// Click is user clicking the button actionID on message m, as it stands
// in the channel now; ok is false when m has no such button.
func (s *Slack) Click(u User, m Message, actionID string) (Interaction, bool) {
	value, found := buttonValue(m.Blocks, actionID)
	if !found {
		return Interaction{}, false
	}
	s.mu.Lock()
	s.seq++
	trigger := fmt.Sprintf("trigger-%d", s.seq)
	s.mu.Unlock()
	return s.payload(map[string]any{
		"type": "block_actions", "team": map[string]any{"id": u.Team}, "trigger_id": trigger,
		"user":    map[string]any{"id": u.ID, "team_id": u.Team, "name": u.Name},
		"channel": map[string]any{"id": m.Channel}, "message": map[string]any{"ts": m.TS},
		"container": map[string]any{"type": "message", "message_ts": m.TS, "channel_id": m.Channel},
		"actions": []map[string]any{{"action_id": actionID, "block_id": "decide", "type": "button", "value": value,
			"action_ts": strconv.FormatInt(time.Now().Unix(), 10)}},
	}), true
}

// Submit is user submitting modal v with option value chosen (empty: none)
// and own words in the "other" field.
func (s *Slack) Submit(u User, v OpenedView, chosen, own string) Interaction {
	var view struct {
		CallbackID      string `json:"callback_id"`
		PrivateMetadata string `json:"private_metadata"`
	}
	_ = json.Unmarshal(v.View, &view)
	values := map[string]any{"other": map[string]any{"other": map[string]any{"type": "plain_text_input", "value": own}}}
	reason := map[string]any{"type": "radio_buttons"}
	if chosen != "" {
		reason["selected_option"] = map[string]any{"value": chosen}
	}
	values["reason"] = map[string]any{"reason": reason}
	return s.payload(map[string]any{
		"type": "view_submission", "team": map[string]any{"id": u.Team},
		"user": map[string]any{"id": u.ID, "team_id": u.Team, "name": u.Name},
		"view": map[string]any{"id": "V1", "type": "modal", "callback_id": view.CallbackID, "private_metadata": view.PrivateMetadata,
			"state": map[string]any{"values": values}},
	})
}

// Close is user closing modal v without submitting it.
func (s *Slack) Close(u User, v OpenedView) Interaction {
	var view struct {
		CallbackID      string `json:"callback_id"`
		PrivateMetadata string `json:"private_metadata"`
	}
	_ = json.Unmarshal(v.View, &view)
	return s.payload(map[string]any{
		"type": "view_closed", "team": map[string]any{"id": u.Team},
		"user": map[string]any{"id": u.ID, "team_id": u.Team, "name": u.Name},
		"view": map[string]any{"id": "V1", "type": "modal", "callback_id": view.CallbackID, "private_metadata": view.PrivateMetadata},
	})
}

// buttonValue finds the value of the button actionID in blocks.
func buttonValue(blocks json.RawMessage, actionID string) (string, bool) {
	var bs []struct {
		Type     string `json:"type"`
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	if json.Unmarshal(blocks, &bs) != nil {
		return "", false
	}
	for _, b := range bs {
		for _, e := range b.Elements {
			if b.Type == "actions" && e.ActionID == actionID {
				return e.Value, true
			}
		}
	}
	return "", false
}
