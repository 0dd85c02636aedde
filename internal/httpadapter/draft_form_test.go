package httpadapter_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/httpadapter"
)

// draftPayments drafts testdata/openapi/payments.yaml (a Stripe-shaped
// API) with the given writes, loads the draft as `systems check` would,
// and returns it as JSON values.
func draftPayments(t *testing.T, write ...string) (*httpadapter.Draft, map[string]any) {
	t.Helper()
	raw, err := os.ReadFile("testdata/openapi/payments.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := httpadapter.DraftFromOpenAPI(raw, httpadapter.DraftOptions{Write: write})
	if err != nil {
		t.Fatalf("DraftFromOpenAPI: %v", err)
	}
	if want := []string{"PAYMENTS_CLIENT_ID", "PAYMENTS_CLIENT_SECRET"}; !slices.Equal(d.Env, want) {
		t.Errorf("Env = %v, want %v", d.Env, want)
	}
	a, err := httpadapter.Load("draft.json", d.File, httpadapter.Config{Getenv: func(k string) string { return "set-" + k }})
	if err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, d.File)
	}
	if got := len(a.Actions()); got != len(write) {
		t.Errorf("%d actions, want %d", got, len(write))
	}
	var file map[string]any
	if err := json.Unmarshal(d.File, &file); err != nil {
		t.Fatal(err)
	}
	return d, file
}

func request(file map[string]any, i int) map[string]any {
	return file["actions"].([]any)[i].(map[string]any)["request"].(map[string]any)
}

// TestDraftFormEncodedWrites: a write whose OpenAPI body is only
// application/x-www-form-urlencoded is drafted as a form body, its fields
// parameters as a JSON body's are (an object whole, a list of single
// values as a list); the form style follows the document's encoding
// (deepObject: brackets, metadata[reason]; form exploded: the repeated
// name), and a file whose writes are all forms says so once at the top.
func TestDraftFormEncodedWrites(t *testing.T) {
	t.Run("one write in the bracket style", func(t *testing.T) {
		d, file := draftPayments(t, "PostRefunds")
		if file["body_encoding"] != "form" || file["form_style"] != "brackets" {
			t.Errorf("the file's body_encoding %v, form_style %v; want form, brackets:\n%s", file["body_encoding"], file["form_style"], d.File)
		}
		req := request(file, 0)
		if _, ok := req["body_encoding"]; ok {
			t.Errorf("the request repeats the file's body_encoding: %v", req)
		}
		want := map[string]any{"charge": "{target.id}", "amount": "{args.amount_cents}", "reason": "{args.reason}",
			"metadata": "{args.metadata}", "expand": []any{"{args.expand}"}}
		if diff := cmp.Diff(want, req["body"]); diff != "" {
			t.Errorf("the refund's body (-want +got):\n%s", diff)
		}
		params := file["actions"].([]any)[0].(map[string]any)["params"].([]any)
		var metadata []string
		for _, p := range params {
			if p := p.(map[string]any); p["name"] == "metadata" {
				for _, sub := range p["properties"].([]any) {
					metadata = append(metadata, sub.(map[string]any)["name"].(string))
				}
			}
		}
		if !slices.Equal(metadata, []string{"order_number", "reason"}) {
			t.Errorf("the metadata parameter's properties are %v, want order_number and reason (sent as metadata[reason])", metadata)
		}
		if notes := strings.Join(d.Notes, "\n"); strings.Contains(notes, "guesses") {
			t.Errorf("a note calls a style the document gives a guess:\n%s", notes)
		}
	})
	t.Run("writes in two styles and a guess", func(t *testing.T) {
		d, file := draftPayments(t, "PostRefunds", "PostChargeLabels", "PostChargeCapture")
		if file["body_encoding"] != "form" || file["form_style"] != nil {
			t.Errorf("the file's body_encoding %v, form_style %v; want form and none:\n%s", file["body_encoding"], file["form_style"], d.File)
		}
		for i, want := range []string{"brackets", "repeat", "repeat"} {
			if got := request(file, i)["form_style"]; got != want {
				t.Errorf("action %d: form_style %v, want %s", i, got, want)
			}
		}
		if got := request(file, 1)["body"].(map[string]any)["labels"]; !cmp.Equal(got, []any{"{args.labels}"}) {
			t.Errorf("the labels are sent as %v, want a list", got)
		}
		if got := request(file, 2)["body"].(map[string]any)["statement_tags"]; got != "{args.statement_tags}" {
			t.Errorf("a list the document joins into one value is sent as %v, want one string", got)
		}
		notes := strings.Join(d.Notes, "\n")
		if !strings.Contains(notes, "body field statement_tags is a list sent as one value, its elements separated by commas") {
			t.Errorf("the notes do not say how statement_tags is written:\n%s", notes)
		}
		if !strings.Contains(notes, "-write PostChargeCapture: the document does not say how expand is encoded") ||
			strings.Contains(notes, "-write PostChargeLabels: the document does not say") {
			t.Errorf("the notes do not say which style is a guess:\n%s", notes)
		}
	})
}

// TestADraftOfJSONWritesSaysNoFormEncoding: JSON bodies are drafted as
// before, with no body_encoding anywhere.
func TestADraftOfJSONWritesSaysNoFormEncoding(t *testing.T) {
	raw, err := os.ReadFile("testdata/openapi/shop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d, err := httpadapter.DraftFromOpenAPI(raw, httpadapter.DraftOptions{Write: []string{"createRefund", "changeShippingAddress"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(d.File), "body_encoding") || strings.Contains(string(d.File), "form_style") {
		t.Errorf("a draft of JSON writes names a form encoding:\n%s", d.File)
	}
}

// TestDraftOAuthClientCredentials: an OAuth 2 scheme with a client
// credentials flow is drafted as oauth2_client_credentials with the
// flow's token URL and the scopes the document requires, the client's id
// and secret from the environment.
func TestDraftOAuthClientCredentials(t *testing.T) {
	_, file := draftPayments(t, "PostRefunds")
	want := map[string]any{"type": "oauth2_client_credentials", "token_url": "https://auth.payments.example/oauth/token",
		"client_id_env": "PAYMENTS_CLIENT_ID", "client_secret_env": "PAYMENTS_CLIENT_SECRET",
		"scopes": []any{"refunds:write", "charges:read"}}
	if diff := cmp.Diff(want, file["auth"]); diff != "" {
		t.Errorf("auth (-want +got):\n%s", diff)
	}
}

// TestDraftFormStyleWhenTheDocumentDisagrees: a body with an object needs
// brackets even where the document sends a list as repeated names (the
// note says so), a body offered as JSON too is drafted as JSON, and a
// form body that is no object is refused as a form's.
func TestDraftFormStyleWhenTheDocumentDisagrees(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: Billing}
servers: [{url: https://billing.example}]
paths:
  /invoices/{id}:
    get:
      operationId: getInvoice
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {content: {application/json: {schema: {type: object, properties: {id: {type: string}}}}}}}
  /invoices/{id}/tags:
    post:
      operationId: tagInvoice
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema: {type: object, properties: {tag: {type: array, items: {type: string}}, metadata: {type: object, properties: {by: {type: string}}}}}
            encoding: {tag: {style: form, explode: true}, metadata: {style: deepObject}}
      responses: {"200": {description: ok}}
  /invoices/{id}/notes:
    post:
      operationId: noteInvoice
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema: {type: object, properties: {note: {type: string}}}
          application/json:
            schema: {type: object, properties: {note: {type: string}}}
      responses: {"200": {description: ok}}
  /invoices/{id}/void:
    post:
      operationId: voidInvoice
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      requestBody: {content: {application/x-www-form-urlencoded: {schema: {type: string}}}}
      responses: {"200": {description: ok}}
`
	if _, err := httpadapter.DraftFromOpenAPI([]byte(doc), httpadapter.DraftOptions{Write: []string{"voidInvoice"}}); err == nil ||
		!strings.Contains(err.Error(), "-write voidInvoice (POST /invoices/{id}/void): its body is a form string, not an object") {
		t.Errorf("a form body that is no object: err = %v", err)
	}
	d, err := httpadapter.DraftFromOpenAPI([]byte(doc), httpadapter.DraftOptions{Write: []string{"tagInvoice", "noteInvoice"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := httpadapter.Load("draft.json", d.File, httpadapter.Config{Getenv: func(string) string { return "x" }}); err != nil {
		t.Fatalf("the draft does not load: %v\n%s", err, d.File)
	}
	var file map[string]any
	if err := json.Unmarshal(d.File, &file); err != nil {
		t.Fatal(err)
	}
	if file["body_encoding"] != nil {
		t.Errorf("a file with a JSON write says body_encoding %v at the top", file["body_encoding"])
	}
	tag, note := request(file, 0), request(file, 1)
	if tag["body_encoding"] != "form" || tag["form_style"] != "brackets" {
		t.Errorf("tagInvoice: body_encoding %v, form_style %v; want form, brackets", tag["body_encoding"], tag["form_style"])
	}
	if note["body_encoding"] != nil || note["form_style"] != nil {
		t.Errorf("noteInvoice, offered as JSON too, is drafted as a form: %v", note)
	}
	if notes := strings.Join(d.Notes, "\n"); !strings.Contains(notes, "-write tagInvoice: the document sends tag as repeated names (tag=a&tag=b), but the body's objects need form_style brackets") {
		t.Errorf("the notes do not say the list is sent otherwise than the document says:\n%s", notes)
	}
}
