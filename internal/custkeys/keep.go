package custkeys

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/text/language"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/store"
)

// maxName is the longest name a passkey is listed under.
const maxName = 60

// Passkey is one of a customer's passkeys as their list shows it.
type Passkey struct {
	ID       int64
	Name     string
	Added    time.Time
	LastUsed *time.Time
}

// Passkeys lists c's passkeys for c.System, oldest first.
func (s *Service) Passkeys(ctx context.Context, c Customer) ([]Passkey, error) {
	if !s.On() {
		return nil, ErrOff
	}
	c = c.normalised()
	keys, err := s.store.CustomerPasskeysOf(ctx, c.System, c.Ref)
	if err != nil {
		return nil, err
	}
	out := make([]Passkey, len(keys))
	for i, k := range keys {
		out[i] = Passkey{ID: k.ID, Name: k.Name, Added: k.CreatedAt, LastUsed: k.LastUsedAt}
	}
	return out, nil
}

// Limit is how many passkeys a customer may have for one system.
func (s *Service) Limit() int { return s.limit }

// errTooMany refuses a passkey past the limit, naming it.
func (s *Service) errTooMany() error {
	return &apperr.Error{Kind: apperr.Conflict, Code: "too_many_passkeys",
		Message: fmt.Sprintf("You have %d passkeys for this business, the most you can have.", s.limit),
		Hint:    "Remove one you no longer use under “Your passkeys”, then add this one."}
}

// Remove removes c's passkey id for c.System with its audit event
// (controlplane.EventCustomerPasskeyRemoved), as c proved who they are
// with proof on request invocationID of task taskID, then mails the
// customer a notice. Another customer's passkey, or one removed already,
// is apperr.NotFound. A decision signed with it and not yet recorded is
// refused from then on (the control plane loads the passkey in the
// decision's transaction).
func (s *Service) Remove(ctx context.Context, c Customer, proof, taskID, invocationID string, id int64) (Passkey, error) {
	if !s.On() {
		return Passkey{}, ErrOff
	}
	if err := mayRegister(proof); err != nil {
		return Passkey{}, err
	}
	c = c.normalised()
	keys, err := s.store.CustomerPasskeysOf(ctx, c.System, c.Ref)
	if err != nil {
		return Passkey{}, err
	}
	name := ""
	for _, k := range keys {
		if k.ID == id {
			name = k.Name
		}
	}
	e, err := s.event(c, proof, controlplane.EventCustomerPasskeyRemoved, taskID, invocationID, name)
	if err != nil {
		return Passkey{}, err
	}
	k, err := s.store.DeleteCustomerPasskey(ctx, c.System, c.Ref, id, e)
	if errors.Is(err, store.ErrNotFound) {
		return Passkey{}, &apperr.Error{Kind: apperr.NotFound, Code: "no_such_passkey",
			Message: "That passkey is not among yours (it may have been removed already).", Hint: "The list shows the ones you have."}
	}
	if err != nil {
		return Passkey{}, err
	}
	s.notify(ctx, c, noticeRemoved, k.Name)
	return Passkey{ID: k.ID, Name: k.Name, Added: k.CreatedAt, LastUsed: k.LastUsedAt}, nil
}

// SweepCeremonies drops the customer ceremonies that expired unanswered;
// it returns how many (the console's sweep runs it).
func (s *Service) SweepCeremonies(ctx context.Context) (int64, error) {
	if s == nil || s.store == nil {
		return 0, nil
	}
	return s.store.DeleteExpiredCustomerCeremonies(ctx, s.now())
}

// event is the audit event of c's change to their passkeys, by c as they
// proved who they are: the system, the business's name as the customer
// knows it and the passkey's name as the audit trail's readers (the
// staff console, in English) read it.
func (s *Service) event(c Customer, proof string, action controlplane.EventAction, taskID, invocationID, name string) (store.Event, error) {
	data := map[string]any{"system": c.System, "shop": s.brand(c.System).Name, "name": DisplayName(s.catalogue.For(language.English), name)}
	return controlplane.AuditEvent(s.now(), controlplane.CustomerActor(c.Ref, proof), action, taskID, invocationID, data)
}

func (s *Service) brand(system string) adapter.Brand {
	if s.registry != nil {
		if sys, err := s.registry.System(system); err == nil {
			return adapter.BrandOf(sys)
		}
	}
	return adapter.Brand{Name: system, Zone: time.UTC}
}

// nameOf is the name a passkey is listed under: name, tidied and cut to
// maxName characters, or the marker of a passkey named after nothing
// (DisplayName writes "Passkey" in the reader's language).
func nameOf(name string) string {
	name = strings.Join(strings.Fields(name), " ")
	if r := []rune(name); len(r) > maxName {
		name = string(r[:maxName])
	}
	if name == "" {
		return browserName + "/"
	}
	return name
}

// BrowserName is the name a passkey gets from the User-Agent of the
// browser that adds it: its parts, browser and device ("Safari",
// "iPhone"), kept as a marker (browserName) that DisplayName writes in
// the reader's language ("Safari on iPhone", "Safari sur iPhone"); ""
// when it says nothing recognisable.
func BrowserName(userAgent string) string {
	has := func(s string) bool { return strings.Contains(userAgent, s) }
	browser := ""
	switch {
	case has("Edg/"):
		browser = "Edge"
	case has("Firefox/"), has("FxiOS/"):
		browser = "Firefox"
	case has("Chrome/"), has("CriOS/"):
		browser = "Chrome"
	case has("Safari/"):
		browser = "Safari"
	}
	device := ""
	switch {
	case has("iPhone"):
		device = "iPhone"
	case has("iPad"):
		device = "iPad"
	case has("Android"):
		device = "Android"
	case has("Macintosh"), has("Mac OS X"):
		device = "Mac"
	case has("Windows"):
		device = "Windows"
	case has("CrOS"):
		device = "Chromebook"
	case has("Linux"):
		device = "Linux"
	}
	if browser == "" && device == "" {
		return ""
	}
	return browserName + browser + "/" + device
}

// The notices a customer is mailed about their passkeys.
const (
	noticeAdded   = "added"
	noticeRemoved = "removed"
)

// notify mails c, at the contact the business has on file, that passkey
// name was added or removed, in the customer's language
// (confirmation.MailLanguage, as every mail to a customer): a passkey
// decides their requests alone, so they hear of every change, and what
// to do if it was not them. A notice that cannot be sent is logged,
// never an error: the change is made.
func (s *Service) notify(ctx context.Context, c Customer, what, name string) {
	if s.mail == nil || s.registry == nil {
		return
	}
	sys, err := s.registry.System(c.System)
	if err != nil {
		return
	}
	dir, ok := sys.(adapter.ContactDirectory)
	if !ok {
		return
	}
	contact, err := dir.Contact(ctx, adapter.Principal{CustomerRef: c.Ref})
	if err != nil || strings.TrimSpace(contact.Email) == "" {
		s.log.Warn("customer passkey notice not sent: no contact on file", "system", c.System, "error", err)
		return
	}
	b := s.brand(c.System)
	ch, err := confirmation.MailLanguage(ctx, s.store, b, c.System, c.Ref, contact)
	if err != nil {
		s.log.Warn("customer passkey notice: the language of the customer's last decision could not be read", "system", c.System, "error", err)
	}
	m := NoticeMail(s.catalogue.For(ch.Tag), contact, b, what == noticeAdded, name, s.now())
	if err := s.mail.Send(ctx, m); err != nil {
		s.log.Warn("customer passkey notice not sent", "system", c.System, "error", err)
	}
}
