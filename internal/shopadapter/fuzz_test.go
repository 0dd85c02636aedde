package shopadapter

import (
	"countersign/internal/money"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"countersign/internal/adapter"
)

func spec(t testing.TB, name string) adapter.ActionSpec {
	t.Helper()
	for _, s := range New(Config{}).Actions() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no action %s", name)
	return adapter.ActionSpec{}
}

// FuzzRefundArgs feeds arbitrary arguments to issue_refund's spec. What it
// accepts must satisfy every declared rule, read back through the
// adapter's own accessors, and lead to a refundable balance that never
// exceeds what the shop holds, for any reason.
func FuzzRefundArgs(f *testing.F) {
	for _, seed := range []string{
		`{"order_id":"ord_1","amount_cents":4210,"reason_code":"damaged"}`,
		`{"order_id":"walnut lamp","amount_cents":1e3,"reason_code":"changed_mind"}`,
		`{"order_id":"o","amount_cents":10000000,"reason_code":"duplicate_charge"}`,
		`{"order_id":"o","amount_cents":10000001,"reason_code":"not_received"}`,
		`{"order_id":"o","amount_cents":1,"reason_code":"wrong_item","price_cents":1}`,
		`{"amount_cents":-1}`, `null`, `[]`, `{"order_id":"\u0000","amount_cents":1.5}`,
	} {
		f.Add([]byte(seed), int64(8400), int64(1200), int64(0))
	}
	s := spec(f, ActionIssueRefund)
	f.Fuzz(func(t *testing.T, raw []byte, subtotal, shipping, refunded int64) {
		args, err := s.Validate(raw)
		if err != nil {
			ae, ok := adapter.AsError(err)
			if !ok || ae.Code != adapter.CodeInvalidArguments || len(ae.Fields) == 0 || ae.Outcome != adapter.Refused {
				t.Fatalf("refusal %v is not an invalid_arguments error naming fields", err)
			}
			return
		}
		ref, amount, reason := str(args, "order_id"), integer(args, "amount_cents"), str(args, "reason_code")
		if ref == "" || utf8.RuneCountInString(ref) > 200 {
			t.Fatalf("accepted order_id %q", ref)
		}
		if amount < 1 || amount > 10_000_000 {
			t.Fatalf("accepted amount_cents %d", amount)
		}
		if !slices.Contains(RefundReasons, reason) {
			t.Fatalf("accepted reason_code %q", reason)
		}
		if len(args) != 3 {
			t.Fatalf("accepted extra arguments: %v", args)
		}
		// Keep the order's money in a plausible range so sums cannot overflow.
		subtotal, shipping = abs(subtotal)%1e9, abs(shipping)%1e7
		total := subtotal + shipping
		refunded = abs(refunded) % (total + 1)
		o := shopOrder{SubtotalCents: subtotal, ShippingCents: shipping, TotalCents: total,
			AmountRefundedCents: refunded, RefundableCents: total - refunded}
		lines, refundable := refundBalance(english(), o, reason)
		if refundable < 0 || refundable > o.RefundableCents {
			t.Fatalf("%s on %+v: refundable %d outside [0, %d]", reason, o, refundable, o.RefundableCents)
		}
		if (reason == "damaged" || reason == "changed_mind") && refundable > max(subtotal-refunded, 0) {
			t.Fatalf("%s refunds shipping: %d of %+v", reason, refundable, o)
		}
		if last := lines[len(lines)-1]; !last.Sum || last.To != money.Format(refundable, "usd") {
			t.Fatalf("last line %+v, want the refundable %d as a sum", last, refundable)
		}
		// The lines add up as a reader adds them: each sum line is the
		// sum of the lines above it, and no shipping or earlier refund
		// reads as a free $0.00.
		var running int64
		for _, l := range lines {
			n := lineCents(t, l.To)
			if l.Sum {
				if n != running {
					t.Fatalf("%s on %+v: %q is %d, the lines above add up to %d: %+v", reason, o, l.Label, n, running, lines)
				}
				continue
			}
			if n == 0 && (strings.HasPrefix(l.Label, "Shipping") || l.Label == "Already refunded") {
				t.Fatalf("%s on %+v: line %q reads $0.00", reason, o, l.Label)
			}
			running += n
		}
	})
}

// lineCents reads "$1.23" or "−$1.23" back into cents.
func lineCents(t *testing.T, s string) int64 {
	neg := strings.HasPrefix(s, "−")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "−"), "$")
	whole, frac, _ := strings.Cut(s, ".")
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("not an amount: %q", s)
	}
	if neg {
		return -(w*100 + f)
	}
	return w*100 + f
}

func abs(n int64) int64 {
	if n < 0 {
		return -(n + 1) // never overflows, unlike -n for the minimum
	}
	return n
}

// FuzzShippingAddressArgs feeds arbitrary arguments to
// change_shipping_address: what the spec and the adapter's own checks
// accept must fit the shop's rules (required fields, a real ISO country,
// at most 200 bytes a field), so the commit cannot fail on them.
func FuzzShippingAddressArgs(f *testing.F) {
	for _, seed := range []string{
		`{"order_id":"ord_1","address":{"name":"J","line1":"1 Road","city":"Reno","postal_code":"89501","country":"us"}}`,
		`{"order_id":"ord_1","address":{"name":"J","line1":"1 Road","line2":"","city":"Reno","postal_code":"1","country":"XX"}}`,
		`{"order_id":"ord_1","address":{"name":"ÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄ","line1":"x","city":"y","postal_code":"z","country":"DE"}}`,
		`{"order_id":"ord_1","address":{"zip":"1"}}`, `{"order_id":"ord_1","address":"1 Road"}`,
	} {
		f.Add([]byte(seed))
	}
	s := spec(f, ActionChangeShippingAddress)
	f.Fuzz(func(t *testing.T, raw []byte) {
		args, err := s.Validate(raw)
		if err != nil {
			return
		}
		addr, err := addressArg(args)
		if err != nil {
			if ae, ok := adapter.AsError(err); !ok || ae.Code != adapter.CodeInvalidArguments {
				t.Fatalf("address refusal %v is not invalid_arguments", err)
			}
			return
		}
		for name, v := range map[string]string{"name": addr.Name, "line1": addr.Line1, "city": addr.City, "postal_code": addr.PostalCode} {
			if v == "" || len(v) > maxAddressBytes {
				t.Fatalf("accepted %s %q", name, v)
			}
		}
		if len(addr.Line2) > maxAddressBytes || !countryCodes[addr.Country] || len(addr.Country) != 2 {
			t.Fatalf("accepted %+v", addr)
		}
	})
}

func TestCountryCodes(t *testing.T) {
	t.Parallel()
	if len(countryCodes) != 249 {
		t.Errorf("%d country codes, want the 249 assigned in ISO 3166-1", len(countryCodes))
	}
}

func TestCalendarDays(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 4, 12, 0, 1, 0, 0, time.UTC)
	cases := []struct {
		from time.Time
		want int
	}{
		{time.Date(2026, 4, 11, 23, 59, 0, 0, time.UTC), 1},
		{time.Date(2026, 4, 12, 0, 0, 0, 0, time.UTC), 0},
		{time.Date(2026, 3, 13, 23, 59, 0, 0, time.UTC), 30},
		{time.Date(2026, 3, 12, 12, 0, 0, 0, time.FixedZone("UTC+13", 13*3600)), 32}, // 11 March in UTC
	}
	for _, tc := range cases {
		if got := calendarDays(tc.from, now); got != tc.want {
			t.Errorf("calendarDays(%s) = %d, want %d", tc.from, got, tc.want)
		}
	}
}

func TestDescribes(t *testing.T) {
	t.Parallel()
	sub := []string{"sub_1", "Pro", "acme.example", "acme", "active", "month", "monthly"}
	cases := []struct {
		ref  string
		want bool
	}{
		{"Pro plan for acme.example", true},
		{"my Pro plan", true},
		{"the PRO subscription on acme.example.", true},
		{"my plan", true},
		{"Starter", false},
		{"Pro plan for acme.shop", false},
		{"sub_1", true},
	}
	for _, tc := range cases {
		if got := describes(tc.ref, sub); got != tc.want {
			t.Errorf("describes(%q) = %t, want %t", tc.ref, got, tc.want)
		}
	}
}
