package shopadapter

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"countersign/internal/adapter"
)

// productDescriptionPatch is the only body the adapter sends to PATCH
// /products/{id}: it has no field for name, price or stock, so no argument
// can change them.
type productDescriptionPatch struct {
	Description     string `json:"description"`
	ExpectedVersion int    `json:"expected_version"`
}

// planProduct checks the product exists and the text would change it.
// Products belong to the shop, so there is no owner check: the console
// offers this action to shop operator principals only.
func (a *Adapter) planProduct(ctx context.Context, _ adapter.Principal, args map[string]any) (*plan, error) {
	pr, target, err := a.findProduct(ctx, str(args, "product_id"))
	if err != nil {
		return nil, err
	}
	desc := str(args, "description")
	if desc == pr.Description {
		return nil, &adapter.Error{Code: "no_change", Outcome: adapter.Refused,
			Message: fmt.Sprintf("%s already has exactly this description.", target.Display),
			Hint:    "Nothing to change."}
	}
	q := adapter.Quote{
		Title:  "Update the description of " + target.Display,
		Target: target,
		Lines: []adapter.QuoteLine{
			{Label: "Description", From: pr.Description, To: desc, Emphasis: true},
		},
		Consequences: []string{
			"The product page will show the new description.",
			"The name, price and stock do not change.",
		},
		Constraints:  []string{"Changes the description only.", "For shop operators only."},
		ConfirmLabel: "Update description",
		DeclineLabel: "Keep current description",
		Reversible:   true,
	}
	return &plan{quote: q, send: func(ctx context.Context, key string) (adapter.Result, error) {
		var after shopProduct
		err := a.shop.write(ctx, http.MethodPatch, "/products/"+url.PathEscape(pr.ID), key,
			productDescriptionPatch{Description: desc, ExpectedVersion: pr.Version}, &after)
		if err != nil {
			return adapter.Result{Steps: []adapter.Step{failedStep("update_product", err)}}, err
		}
		return adapter.Result{
			Reference: reference("prod_update_", key),
			Data:      map[string]any{"product_id": after.ID, "previous_description": pr.Description},
			Steps:     []adapter.Step{{Name: "update_product", Outcome: "applied"}},
		}, nil
	}}, nil
}

// verifyProduct reads the product again: its description must be the new
// text.
func (a *Adapter) verifyProduct(ctx context.Context, _ adapter.Principal, call adapter.Call, args map[string]any, _ *adapter.Result) (adapter.Verification, error) {
	pr, _, err := a.findProduct(ctx, targetRef(call, args, "product_id"))
	if err != nil {
		return adapter.Verification{}, err
	}
	ok := pr.Description == str(args, "description")
	evidence := fmt.Sprintf("Read %s again: the description is the new text.", productDisplay(pr))
	if !ok {
		evidence = fmt.Sprintf("Read %s again: the description is not the new text (it reads %q).", productDisplay(pr), shorten(pr.Description, 80))
	}
	return adapter.Verification{Verified: ok, Evidence: evidence, At: a.now(),
		Observed: map[string]any{"product_id": pr.ID, "description": shorten(pr.Description, 200)}}, nil
}
