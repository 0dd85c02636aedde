package httpadapter_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"countersign/internal/adapter"
	"countersign/store"
	"countersign/store/dbtest"
)

// withPrecondition adds a precondition to seatsFile's action.
func withPrecondition(file, pre string) string {
	return strings.Replace(file, `"result": {"reference": "{response.id}"}`, `"precondition": `+pre+`, "result": {"reference": "{response.id}"}`, 1)
}

const seatsPatch = `{"method": "PATCH", "path": "/plans/{target.id}", "body": {"seats": "{args.seats}"}}`

// TestPreconditionRefusalIsTargetChanged: a precondition the system
// enforces — If-Match with the target's version, the version in a body
// field, or a conditional filter in the path — makes a write that another
// writer beat between the re-read and the send refused as target_changed,
// with nothing changed; sent on an unchanged target it carries the version
// and succeeds.
func TestPreconditionRefusalIsTargetChanged(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, request, pre string
		sent               func(s *seatsSystem) string
	}{
		{"If-Match", seatsPatch, `{"header": "If-Match", "refusal": {"status": [412]}}`,
			func(s *seatsSystem) string { return s.writes[0].Header.Get("If-Match") }},
		{"body field", seatsPatch, `{"body_field": "/expected_version", "refusal": {"status": [409], "system_code": "version_conflict"}}`,
			func(s *seatsSystem) string { return fmt.Sprint(s.bodies[0]["expected_version"]) }},
		{"conditional filter", `{"method": "PATCH", "path": "/plans/{target.id}?version=eq.{target.version}", "body": {"seats": "{args.seats}"}}`,
			`{"refusal": {"when": "status == 200 && type(body) == list && size(body) == 0"}}`,
			func(s *seatsSystem) string { return strings.TrimPrefix(s.writes[0].URL.Query().Get("version"), "eq.") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sys := newSeatsSystem(t)
			ledger := adapter.NewLedger(store.New(dbtest.New(t)), clock)
			a, err := loadSeats(t, sys, withPrecondition(seatsFile(`"idempotency": {"body_field": "/op_id"}`, tc.request), tc.pre), ledger)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := changeSeats(t, a, 5, "key-one"); err != nil {
				t.Fatal(err)
			}
			if got := tc.sent(sys); got != "1" {
				t.Errorf("the write carried version %q, want the version read, 1", got)
			}
			sys.interleave = true
			call, _, err := changeSeats(t, a, 6, "key-two")
			ae, ok := adapter.AsError(err)
			if !ok || ae.Code != adapter.CodeStaleTarget || ae.Outcome != adapter.Refused {
				t.Fatalf("a write on a target changed after the re-read: %v, want target_changed, refused", err)
			}
			if sys.seats != 9 || len(sys.changes) != 1 {
				t.Errorf("seats %d after %d changes; want the other writer's 9 and only the first change", sys.seats, len(sys.changes))
			}
			look, err := a.Lookup(context.Background(), adapter.Principal{CustomerRef: "ada@example.com"}, call)
			if err != nil || look.LedgerState != "refused" {
				t.Errorf("lookup %+v, %v: want the call recorded as refused", look, err)
			}
		})
	}
}

// TestWithoutAPreconditionTheLastWriterWins: what holds without one — the
// adapter's own re-read catches a change made before it, but a change
// between the re-read and the write is overwritten.
func TestWithoutAPreconditionTheLastWriterWins(t *testing.T) {
	t.Parallel()
	sys := newSeatsSystem(t)
	ledger := adapter.NewLedger(store.New(dbtest.New(t)), clock)
	a, err := loadSeats(t, sys, seatsFile(`"idempotency": {"body_field": "/op_id"}`, seatsPatch), ledger)
	if err != nil {
		t.Fatal(err)
	}
	sys.interleave = true
	if _, _, err := changeSeats(t, a, 6, "key-one"); err != nil {
		t.Fatalf("without a precondition the write is sent and applied: %v", err)
	}
	if sys.seats != 6 {
		t.Errorf("seats %d, want 6: the other writer's change was overwritten", sys.seats)
	}
}

// TestPreconditionMustSayItsRefusal: a refusal matching every answer or a
// success, a header and a body field at once, a version field the body
// writes itself or where the idempotency key goes, and a value sending an
// argument no quote line shows do not load.
func TestPreconditionMustSayItsRefusal(t *testing.T) {
	t.Parallel()
	sys := newSeatsSystem(t)
	for pre, want := range map[string]string{
		`{"header": "If-Match", "refusal": {"status": []}}`:                        "the refusal matches every answer",
		`{"header": "If-Match", "body_field": "/v", "refusal": {"status": [412]}}`: "not both",
		`{"body_field": "/seats", "refusal": {"status": [409]}}`:                   "writes /seats itself",
		`{"header": "If-Match", "refusal": {"status": ["2xx"]}}`:                   "would take every applied write for a refusal",
		`{"header": "If-Match", "refusal": {"status": [200]}}`:                     "200 is a success",
	} {
		_, err := loadSeats(t, sys, withPrecondition(seatsFile(`"idempotency_header": "X-Request-Id"`, seatsPatch), pre), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", pre, err, want)
		}
	}
	// The version may not go where the key goes: the system would lose the key.
	for _, field := range []string{"/op_id", "/op_id/v", "/meta"} {
		file := withPrecondition(seatsFile(`"idempotency": {"body_field": "/op_id"}`, seatsPatch),
			`{"body_field": "`+field+`", "refusal": {"status": [409]}}`)
		if field == "/meta" {
			file = withPrecondition(seatsFile(`"idempotency": {"body_field": "/meta/op_id"}`, seatsPatch), `{"body_field": "/meta", "refusal": {"status": [409]}}`)
		}
		if _, err := loadSeats(t, sys, file, nil); err == nil || !strings.Contains(err.Error(), "where the idempotency key goes") {
			t.Errorf("precondition body_field %s beside the key's: %v, want refused", field, err)
		}
	}
	// Its value reaches the system, so it may send only what the quote shows.
	withNote := strings.Replace(seatsFile(`"idempotency_header": "X-Request-Id"`, seatsPatch),
		`{"name": "seats", "type": "integer"`, `{"name": "note", "type": "string", "description": "a note"},
      {"name": "seats", "type": "integer"`, 1)
	if _, err := loadSeats(t, sys, withPrecondition(withNote, `{"header": "If-Match", "value": "{args.note}", "refusal": {"status": [412]}}`), nil); err == nil ||
		!strings.Contains(err.Error(), "sends args.note to the system, but no quote line shows it") {
		t.Errorf("a precondition value of an argument no quote line shows: %v, want refused", err)
	}
}
