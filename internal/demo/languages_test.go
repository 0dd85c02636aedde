package demo_test

import (
	"context"
	"strings"
	"testing"

	"countersign/internal/adapter"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
)

// TestTheDemoHasCustomersInThreeLanguages: besides Jordan Lee in English,
// the demo has a customer in French, German and Arabic, each with their
// language on the shop's customer record (what their pages read) and a
// request waiting for them, reused on a restart.
func TestTheDemoHasCustomersInThreeLanguages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newConsole(t)
	dataDir := t.TempDir()
	first := c.start(t, dataDir)
	sys, err := c.reg.System("shop")
	if err != nil {
		t.Fatal(err)
	}
	dir := sys.(adapter.ContactDirectory)
	var langs []string
	for _, s := range first.Speakers {
		langs = append(langs, s.Locale)
		contact, err := dir.Contact(ctx, adapter.Principal{CustomerRef: s.Email})
		if err != nil || contact.Locale != s.Locale || contact.Name != s.Name {
			t.Errorf("%s: the shop's record %+v, %v; want %s in %s", s.Email, contact, err, s.Name, s.Locale)
		}
		opened, err := c.links.Open(ctx, strings.TrimPrefix(s.Link.Path, confirmation.PathPrefix))
		if err != nil {
			t.Fatalf("%s: %v", s.Email, err)
		}
		inv, err := c.cp.Invocation(ctx, opened.InvocationID)
		if err != nil {
			t.Fatal(err)
		}
		if inv.Action != s.Link.Action || inv.State != controlplane.AwaitingConfirmation || opened.CustomerRef != s.Email {
			t.Errorf("%s: the link opens %s (%s) for %s", s.Email, inv.Action, inv.State, opened.CustomerRef)
		}
	}
	if strings.Join(langs, " ") != "fr de ar" {
		t.Errorf("the demo's customers in other languages speak %v, want fr de ar", langs)
	}
	c.start(t, dataDir)
	for _, s := range first.Speakers {
		invs, err := c.lists.CustomerInvocations(ctx, s.Email, 50)
		if err != nil {
			t.Fatal(err)
		}
		if n := countState(invs, controlplane.AwaitingConfirmation); n != 1 {
			t.Errorf("%s: %d requests waiting after two starts, want the first reused", s.Email, n)
		}
	}
}
