package custkeys_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/language"

	"countersign/internal/apperr"
	"countersign/internal/clocktest"
	"countersign/internal/consent"
	"countersign/internal/custkeys"
	"countersign/internal/factors/softkey"
	"countersign/internal/locale"
	"countersign/internal/racetest"
	"countersign/store"
	"countersign/store/dbtest"
)

func setupWith(t *testing.T, cfg custkeys.Config) (*bundle, *store.Store) {
	t.Helper()
	clock := clocktest.New(time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC))
	st := store.New(dbtest.New(t))
	cfg.PublicURL, cfg.Now = origin+"/", clock.Now
	svc, err := custkeys.New(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &bundle{svc: svc, clock: clock}, st
}

func tooMany(t *testing.T, what string, err error, limit string) {
	t.Helper()
	if e, ok := apperr.As(err); !ok || e.Code != "too_many_passkeys" || !strings.Contains(e.Message, limit+" passkeys") {
		t.Fatalf("%s: %v, want too_many_passkeys naming %s", what, err, limit)
	}
}

// TestACustomerHasAtMostTheLimitOfPasskeys: past the limit a customer is
// refused at the begin, with the limit named; two registrations begun
// below it and finished together, held after their answers verified and
// released at once against PostgreSQL, keep one passkey, not two. The
// limit is per system: another system's passkeys do not count.
func TestACustomerHasAtMostTheLimitOfPasskeys(t *testing.T) {
	t.Parallel()
	b, st := setupWith(t, custkeys.Config{Limit: 3})
	for range 2 {
		b.register(t, jordan, "link")
	}
	b.register(t, custkeys.Customer{System: "shop-eu", Ref: jordan.Ref}, "link")
	ids, bodies := make([]string, 2), make([][]byte, 2)
	for i := range 2 {
		cer, err := b.svc.BeginRegistration(t.Context(), jordan, "inv_1", "link")
		if err != nil {
			t.Fatalf("begin %d below the limit: %v", i, err)
		}
		ids[i] = cer.ID
		if _, bodies[i], err = softkey.Create(cer.Options, rpID, origin); err != nil {
			t.Fatal(err)
		}
	}
	// The test holds the passkeys table against inserts, so each
	// registration stops at its INSERT having counted (or, under the
	// rule, the second at the customer's lock); both are seen waiting
	// before the hold is released.
	hold, err := st.Pool().Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.Exec(t.Context(), `LOCK TABLE customer_passkeys IN SHARE ROW EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	done := make(chan []error)
	go func() {
		done <- racetest.Run(2, func(i int) error {
			return b.svc.FinishRegistration(context.Background(), custkeys.Registration{C: jordan, InvocationID: "inv_1", Proof: "link"}, ids[i], bodies[i])
		})
	}()
	for waiting := 0; waiting < 2; {
		if err := st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		runtime.Gosched()
	}
	if err := hold.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	errs := <-done
	kept := 0
	for _, err := range errs {
		if err == nil {
			kept++
		} else {
			tooMany(t, "the racing registration", err, "3")
		}
	}
	if keys, err := st.CustomerPasskeysOf(t.Context(), jordan.System, jordan.Ref); err != nil || len(keys) != 3 || kept != 1 {
		t.Fatalf("after the race: %d passkeys (%v), %d registrations kept; want 3 and 1", len(keys), err, kept)
	}
	_, err = b.svc.BeginRegistration(t.Context(), jordan, "inv_1", "account")
	tooMany(t, "a fourth passkey", err, "3")
}

// TestExpiredCeremoniesAreSwept: ceremonies nobody answered are dropped
// by the sweep once expired, not only at the next begin; a live one stays
// and can still be finished.
func TestExpiredCeremoniesAreSwept(t *testing.T) {
	t.Parallel()
	b, st := setupWith(t, custkeys.Config{})
	b.register(t, jordan, "link")
	if _, err := b.svc.BeginRegistration(t.Context(), jordan, "inv_1", "link"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.BeginDecision(t.Context(), jordan, decision(t, "inv_2", 1, quote, consent.Confirm)); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(4 * time.Minute)
	live, err := b.svc.BeginRegistration(t.Context(), custkeys.Customer{System: "shop-eu", Ref: jordan.Ref}, "inv_3", "link")
	if err != nil {
		t.Fatal(err)
	}
	count := func() int {
		var n int
		if err := st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM customer_webauthn_ceremonies`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n, err := b.svc.SweepCeremonies(t.Context()); err != nil || n != 0 || count() != 3 {
		t.Fatalf("a sweep before any expired: %d (%v), %d left; want 0 and 3", n, err, count())
	}
	b.clock.Advance(2 * time.Minute)
	if n, err := b.svc.SweepCeremonies(t.Context()); err != nil || n != 2 || count() != 1 {
		t.Fatalf("the sweep after five minutes: %d (%v), %d left; want 2 and 1", n, err, count())
	}
	_, body, err := softkey.Create(live.Options, rpID, origin)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.svc.FinishRegistration(t.Context(), custkeys.Registration{C: custkeys.Customer{System: "shop-eu", Ref: jordan.Ref},
		InvocationID: "inv_3", Proof: "link"}, live.ID, body); err != nil {
		t.Fatalf("the live ceremony after the sweep: %v", err)
	}
}

// TestAPasskeyIsNamedAfterTheBrowserThatAddedIt: the list tells passkeys
// apart by the browser and device that added them, kept as parts and
// written in the reader's language; a name typed stays as typed.
func TestAPasskeyIsNamedAfterTheBrowserThatAddedIt(t *testing.T) {
	t.Parallel()
	en, fr, ar := locale.Shipped().For(language.English), locale.Shipped().For(language.French), locale.Shipped().For(language.Arabic)
	for ua, want := range map[string][3]string{
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1": {"Safari on iPhone", "Safari sur iPhone", "Safari على iPhone"},
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36 Edg/124.0":                   {"Edge on Windows", "Edge sur Windows", "Edge على Windows"},
		"Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36":                                {"Chrome on Android", "Chrome sur Android", "Chrome على Android"},
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 14.4; rv:125.0) Gecko/20100101 Firefox/125.0":                                                     {"Firefox on Mac", "Firefox sur Mac", "Firefox على Mac"},
		"Mozilla/5.0 (X11; CrOS x86_64 14541.0.0)": {"Passkey on Chromebook", "Clé d’accès sur Chromebook", "مفتاح مرور على Chromebook"},
		"Go-http-client/1.1":                       {"Passkey", "Clé d’accès", "مفتاح مرور"},
	} {
		name := custkeys.BrowserName(ua)
		for i, l := range []*locale.Localizer{en, fr, ar} {
			if got := custkeys.DisplayName(l, name); got != want[i] {
				t.Errorf("%q in %s: %q, want %q", ua, l.Tag(), got, want[i])
			}
		}
	}
	if got := custkeys.DisplayName(fr, "Ma clé du bureau"); got != "Ma clé du bureau" {
		t.Errorf("a typed name in French: %q, want it as typed", got)
	}
}
