package httpadapter

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// moneyField is what a draft assumed of a body field or a mutation input
// that holds an amount of money beside a currency. The action takes the
// amount as the policy counts money, an integer in the currency's minor
// units, and sends it as the system reads it.
type moneyField struct {
	field    string // the field or input, for the note
	param    string // the parameter, in minor units: amount_cents
	currency string // CEL: the currency, args.currency or target.currency
	// major says the system reads a decimal in whole units ("12.50"),
	// number that it reads a JSON number (12.5), not a string.
	major, number bool
	// said is what the document says of the unit; empty when it does
	// not, and the unit is a guess a person must confirm.
	said string
}

// amountName and currencyName are a money field's and a currency's names
// (snake case); *_cents fields are money in minor units already.
var (
	amountName   = regexp.MustCompile(`^([a-z0-9_]+_)?amount(_[a-z0-9_]+)?$`)
	currencyName = regexp.MustCompile(`^([a-z0-9_]+_)?currency(_code)?$`)
	minorWords   = regexp.MustCompile(`(?i)minor units?|smallest (currency )?unit|\bcents\b|subunit`)
	majorWords   = regexp.MustCompile(`(?i)decimal|major units?|whole units?|\d\.\d\d`)
)

// isAmount says whether a field named n (as the system names it) is an
// amount the draft may take for money.
func isAmount(n string) bool {
	s := snake(n, false)
	return amountName.MatchString(s) && !strings.HasSuffix(s, "_cents") && celName.MatchString(n)
}

// currencyOf is the CEL of the first of names that names a currency, under
// prefix ("args." or "target."); "" when none does.
func currencyOf(prefix string, names ...string) string {
	for _, n := range names {
		if currencyName.MatchString(snake(n, false)) && celName.MatchString(n) {
			if prefix == "args." {
				n = snake(n, false)
			}
			return prefix + n
		}
	}
	return ""
}

// unit decides how the system reads an amount of type t ("integer",
// "number", "string"): an integer in minor units, a decimal otherwise;
// said is the evidence the document gives, or "" for a guess. ok is
// false for a type no amount has.
func (m *moneyField) unit(t, description, format string) (ok bool) {
	switch t {
	case "integer":
		if minorWords.MatchString(description) {
			m.said = fmt.Sprintf("%q", strings.TrimSpace(description))
		}
	case "number", "string":
		m.major, m.number = true, t == "number"
		switch {
		case strings.EqualFold(format, "decimal") || strings.Contains(strings.ToLower(format), "decimal"):
			m.said = "format " + format
		case majorWords.MatchString(description):
			m.said = fmt.Sprintf("%q", strings.TrimSpace(description))
		}
	default:
		return false
	}
	return true
}

// value is the CEL that sends the amount as the system reads it.
func (m *moneyField) value() string {
	arg := "args." + m.param
	switch {
	case !m.major:
		return arg
	case m.number:
		return "double(major_units(" + arg + ", " + m.currency + "))"
	}
	return "major_units(" + arg + ", " + m.currency + ")"
}

// spec is the action's parameter of the amount: a TODO to confirm when
// the unit is a guess, so that `systems check` names it.
func (m *moneyField) spec() obj {
	desc := "How much, in the currency's minor units (1250 for 12.50 EUR)."
	if m.said == "" {
		assumed := "an integer in minor units, sent as given"
		if m.major {
			assumed = strings.TrimPrefix(m.how(), "as ")
		}
		desc = todo + "confirm the unit the system reads in " + m.field + ": the draft assumed " + assumed +
			"; then write: how much, in the currency's minor units (1250 for 12.50 EUR)."
	}
	return obj{{"name", m.param}, {"type", "integer"}, {"minimum", 1}, {"description", desc}, {"required", true}}
}

// how says how the amount is sent, for the note and the TODO.
func (m *moneyField) how() string {
	switch {
	case !m.major && m.said == "":
		return "as given: an integer, assumed in minor units"
	case !m.major:
		return "as given: an integer in minor units"
	case m.number:
		return "as a decimal number in whole units (1250 sent as 12.5)"
	}
	return `as a decimal in whole units (1250 sent as "12.50")`
}

// note says what the draft assumed; where is the field as the note names
// it, source "document" or "schema".
func (m *moneyField) note(where, source string) string {
	tail := ", as the " + source + " says (" + m.said + ")"
	if m.said == "" {
		tail = "; the " + source + " does not say: confirm it"
		if m.major {
			tail = ", assumed" + tail
		}
	}
	return fmt.Sprintf("%s is money in %s: the parameter %s, in the currency's minor units (the action's amount_param), sent %s%s.",
		where, m.currency, m.param, m.how(), tail)
}

// quoteOf adds the amount and its currency to a drafted quote, when the
// amount's currency is known (m is not nil and names it).
func (m *moneyField) quoteOf(q obj) obj {
	if m == nil || m.currency == "" {
		return q
	}
	at := q.index("confirm_label")
	return slices.Insert(q, at, kv{"amount_cents", "args." + m.param}, kv{"currency", "{" + m.currency + ".upperAscii()}"})
}

// line is the quote's line showing the amount.
func (m *moneyField) line() obj {
	return obj{{"label", label(m.field)}, {"to", "{money(args." + m.param + ", " + m.currency + ".upperAscii())}"}, {"emphasis", true}}
}

// crossKeys name (snake case) a business object in another system too:
// the order a payment was taken for, a reference the other system wrote.
var crossKeys = []string{"order_number", "external_id", "external_reference", "merchant_reference", "client_reference_id"}

// identityGuess proposes an object kind's business key from its fields
// (top) and those of its metadata object (meta, the field's name metaName):
// the path under object and the key's name; "" when no field is an
// obvious one. An order's own number is the order_number.
func identityGuess(kind string, top []string, metaName string, meta []string) (path, name string) {
	find := func(names []string) string {
		for _, k := range crossKeys {
			for _, n := range names {
				if snake(n, false) == k && celName.MatchString(n) {
					return n
				}
			}
		}
		return ""
	}
	if n := find(top); n != "" {
		return n, snake(n, false)
	}
	if n := find(meta); n != "" && celName.MatchString(metaName) {
		return metaName + "." + n, snake(n, false)
	}
	for _, n := range top {
		if kind == "order" && n == "number" {
			return n, "order_number"
		}
	}
	return "", ""
}

// identitySpec is a proposed identity that holds of nothing until a
// person confirms it: its value gives no key while the TODO is there.
func identitySpec(kind, path, name string) obj {
	confirm := todo + "confirm that " + path + " is the " + strings.ReplaceAll(name, "_", " ") + " of the same " +
		strings.ReplaceAll(kind, "_", " ") + " in every system that holds it, then write just object." + path
	return obj{{"name", name}, {"value", "'" + strings.ReplaceAll(confirm, "'", "") + "' == '' ? object." + path + " : ''"}}
}

// identityNote says what the draft proposed and what to do about it.
func identityNote(kind, path, name string) string {
	return fmt.Sprintf("objects.%s: object.%s looks like a key another system holds too: the draft proposes it as the business key %s, "+
		"which holds of nothing until you confirm it: write \"value\": \"object.%s\" only if the business keeps it true in every system "+
		"(see \"One business object in several systems\" in internal/httpadapter/README.md), or remove identity.", kind, path, name, path)
}
