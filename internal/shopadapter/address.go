package shopadapter

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"countersign/internal/adapter"
	"countersign/internal/locale"
)

// orderAddressPatch is the only body the adapter sends to PATCH
// /orders/{id}.
type orderAddressPatch struct {
	ShippingAddress shopAddress `json:"shipping_address"`
	ExpectedVersion int         `json:"expected_version"`
}

// maxAddressBytes is the shop's limit per address field.
const maxAddressBytes = 200

// countryCodes are the officially assigned ISO 3166-1 alpha-2 codes.
var countryCodes = func() map[string]bool {
	m := map[string]bool{}
	for c := range strings.FieldsSeq(`
		AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW
		BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI
		FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN
		IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME
		MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF
		PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV
		SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE
		YT ZA ZM ZW`) {
		m[c] = true
	}
	return m
}()

// addressArg reads the validated address argument and checks what the
// schema cannot: the country code and the shop's byte limits.
func addressArg(args map[string]any) (shopAddress, error) {
	m, _ := args["address"].(map[string]any)
	get := func(k string) string { s, _ := m[k].(string); return s }
	addr := shopAddress{Name: get("name"), Line1: get("line1"), Line2: get("line2"), City: get("city"),
		PostalCode: get("postal_code"), Country: strings.ToUpper(get("country"))}
	fields := map[string]string{}
	if !countryCodes[addr.Country] {
		fields["address.country"] = fmt.Sprintf("%q is not an ISO 3166-1 alpha-2 country code; use e.g. US, DE, GB", addr.Country)
	}
	for name, v := range map[string]string{"name": addr.Name, "line1": addr.Line1, "line2": addr.Line2, "city": addr.City} {
		if len(v) > maxAddressBytes {
			fields["address."+name] = fmt.Sprintf("must be at most %d bytes of UTF-8", maxAddressBytes)
		}
	}
	if len(fields) > 0 {
		return shopAddress{}, adapter.Invalid(fields)
	}
	return addr, nil
}

// formatAddress writes an address on one line.
func formatAddress(a shopAddress) string {
	parts := []string{a.Name, a.Line1}
	if a.Line2 != "" {
		parts = append(parts, a.Line2)
	}
	return strings.Join(append(parts, a.City+" "+a.PostalCode, a.Country), ", ")
}

// planAddress checks the address, that the order is the customer's and
// still pending, and that the address would change.
func (a *Adapter) planAddress(ctx context.Context, p adapter.Principal, args map[string]any) (*plan, error) {
	addr, err := addressArg(args)
	if err != nil {
		return nil, err
	}
	cust, err := a.customer(ctx, p)
	if err != nil {
		return nil, err
	}
	order, target, err := a.findOrder(ctx, cust, str(args, "order_id"))
	if err != nil {
		return nil, err
	}
	if order.FulfilmentStatus != "pending" {
		return nil, &adapter.Error{Code: "order_already_fulfilled", Outcome: adapter.Refused, PolicyRefusal: true,
			Message: fmt.Sprintf("%s is already %s; its shipping address can no longer be changed.", target.Display, words(order.FulfilmentStatus)),
			Hint:    "The parcel has left; a person can arrange a redirect with the carrier."}
	}
	if addr == order.ShippingAddress {
		return nil, &adapter.Error{Code: "no_change", Outcome: adapter.Refused,
			Message: fmt.Sprintf("%s already ships to this address.", target.Display), Hint: "Nothing to change."}
	}
	q := a.localized(func(t texts) adapter.Quote {
		items := t.items(order)
		facts := orderFacts(t, order)
		facts.Title = t.T("address.customer_title", locale.Params{"Items": items})
		return adapter.Quote{
			Customer: facts,
			Title:    t.T("address.title", locale.Params{"ID": order.ID, "Items": items}),
			Target:   target,
			Lines: []adapter.QuoteLine{
				{Label: t.T("line.ship_to", nil), From: formatAddress(order.ShippingAddress), To: formatAddress(addr), Emphasis: true},
			},
			Consequences: []string{
				t.T("address.ships_to", locale.Params{"Number": orderNumber(order), "Address": formatAddress(addr)}),
				t.T("address.previous_unused", nil),
			},
			Constraints:  []string{t.T("address.until_packed", nil)},
			ConfirmLabel: t.T("address.confirm", nil),
			DeclineLabel: t.T("address.decline", nil),
			Reversible:   true,
		}
	})
	return &plan{quote: q, send: func(ctx context.Context, key string) (adapter.Result, error) {
		var after shopOrder
		err := a.shop.write(ctx, http.MethodPatch, "/orders/"+url.PathEscape(order.ID), key,
			orderAddressPatch{ShippingAddress: addr, ExpectedVersion: order.Version}, &after)
		if err != nil {
			return adapter.Result{Steps: []adapter.Step{failedStep("change_address", err)}}, err
		}
		return adapter.Result{
			Reference: reference("addr_change_", key),
			Data:      map[string]any{"order_id": after.ID, "ship_to": formatAddress(after.ShippingAddress)},
			Steps:     []adapter.Step{{Name: "change_address", Outcome: "applied"}},
		}, nil
	}}, nil
}

// verifyAddress reads the order again: it must ship to the new address.
func (a *Adapter) verifyAddress(ctx context.Context, p adapter.Principal, call adapter.Call, args map[string]any, _ *adapter.Result) (adapter.Verification, error) {
	addr, err := addressArg(args)
	if err != nil {
		return adapter.Verification{}, err
	}
	cust, err := a.customer(ctx, p)
	if err != nil {
		return adapter.Verification{}, err
	}
	order, _, err := a.findOrder(ctx, cust, targetRef(call, args, "order_id"))
	if err != nil {
		return adapter.Verification{}, err
	}
	ok := order.ShippingAddress == addr
	return adapter.Verification{Verified: ok, At: a.now(),
		Evidence: fmt.Sprintf("Read order %s again: it ships to %s.", order.ID, formatAddress(order.ShippingAddress)),
		Observed: map[string]any{"order_id": order.ID, "ship_to": formatAddress(order.ShippingAddress)}}, nil
}
