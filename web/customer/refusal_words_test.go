package customer

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/text/language"

	"countersign/internal/apperr"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/locale"
	"countersign/web/kit"
	"countersign/web/layout"
)

// frenchPage is a handler and a request whose page speaks French, and
// the log the handler writes to.
func frenchPage(t *testing.T) (*Handler, echo.Context, *bytes.Buffer) {
	t.Helper()
	var log bytes.Buffer
	now := time.Date(2026, 12, 1, 9, 4, 0, 0, time.UTC)
	h := New(&layout.Frame{Site: &kit.Site{Log: slog.New(slog.NewTextHandler(&log, nil)), Now: func() time.Time { return now }}},
		Config{Catalogue: locale.Shipped()})
	req := httptest.NewRequest("GET", "/c/x", nil)
	ch := locale.Choice{Tag: language.French, Dir: locale.LTR}
	req = req.WithContext(locale.WithLocalizer(req.Context(), locale.Shipped().For(language.French), ch))
	return h, echo.New().NewContext(req, httptest.NewRecorder()), &log
}

// TestFieldErrorsAreSaidByTheirCode: the page words a field's error from
// its code and data (apperr.Error.FieldCodes), whatever the English for
// the API says; a field error without a code of known words is a generic
// sentence in the page's language, its code logged.
func TestFieldErrorsAreSaidByTheirCode(t *testing.T) {
	h, c, log := frenchPage(t)
	for _, tc := range []struct {
		err  *apperr.Error
		want map[string]string
	}{
		{apperr.InvalidField("code", confirmation.CodeWrong, "wrong, 2 to go", map[string]any{"tries_left": 2}),
			map[string]string{"code": "Ce code est erroné\u00a0; il vous reste 2 essais."}},
		{apperr.InvalidField("code", confirmation.CodeWrong, "that code is wrong; 1 tries left", map[string]any{"tries_left": 1}),
			map[string]string{"code": "Ce code est erroné\u00a0; il vous reste 1 essai."}},
		{apperr.InvalidField("code", confirmation.CodeFormat, "six digits please", nil),
			map[string]string{"code": "Saisissez les 6 chiffres reçus par e-mail."}},
		{apperr.InvalidField("reason", controlplane.ReasonTooLong, "too long", nil),
			map[string]string{"reason": locale.Shipped().For(language.French).T("pages.request.reason.too_long", nil)}},
		{apperr.InvalidFields(map[string]string{"code": "enter the 6 digits from the e-mail"}),
			map[string]string{"code": "Veuillez vérifier ce que vous avez saisi ici."}},
	} {
		got := h.fieldWords(c, tc.err)
		for k, want := range tc.want {
			if got[k] != want {
				t.Errorf("%v: %s says %q, want %q", tc.err, k, got[k], want)
			}
		}
	}
	if !strings.Contains(log.String(), "field code") {
		t.Errorf("a field error said in generic words is not logged:\n%s", log.String())
	}
}

// TestRefusalsAreSaidFromTheCatalogue: one function says every refusal
// on a customer's page: by its code with the data it carries (the time
// and masked address of the last mail), this package's own as written,
// and one without words in a generic sentence, never its English, the
// code logged.
func TestRefusalsAreSaidFromTheCatalogue(t *testing.T) {
	h, c, log := frenchPage(t)
	sent := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	limit := &apperr.Error{Kind: apperr.LimitReached, Code: "too_many_codes", Message: "We sent you a code at 09:00 to j***@example.com.",
		Details: map[string]any{"sent_at": sent, "sent_to": "j***@example.com"}}
	if got := unisolate(h.refusalOf(c, limit).text()); got != "Nous vous avons envoyé un code à 1er déc., 09:00 UTC à l’adresse j***@example.com, "+
		"et nous n’envoyons que quelques e-mails par demande sur une courte période. Consultez vos e-mails pour retrouver les codes envoyés\u00a0: "+
		"chacun est valable 10 minutes. Ou réessayez plus tard." {
		t.Errorf("too_many_codes: %q", got)
	}
	ours := said(&apperr.Error{Kind: apperr.NotFound, Code: "request_not_found", Message: "Déjà dit.", Hint: "Ici."})
	if got := h.refusalOf(c, ours).text(); got != "Déjà dit. Ici." {
		t.Errorf("this package's own refusal: %q", got)
	}
	unknown := &apperr.Error{Kind: apperr.Forbidden, Code: "something_new", Message: "This request cannot be done."}
	if got := h.refusalOf(c, unknown).text(); got != "Nous n’avons pas pu faire cela. Veuillez réessayer dans une minute, ou contacter l’entreprise si le problème persiste." {
		t.Errorf("a refusal without words: %q", got)
	}
	if !strings.Contains(log.String(), "code=something_new") {
		t.Errorf("the code of a refusal without words is not logged:\n%s", log.String())
	}
	// Returned by a handler, it reaches the error page said, with its kind.
	out := h.sayRefusal(c, unknown)
	if e, ok := apperr.As(out); !ok || e.Kind != apperr.Forbidden || e.Code != "something_new" || strings.Contains(e.Message, "cannot be done") ||
		!errors.Is(out, unknown) {
		t.Errorf("sayRefusal: %v", out)
	}
}

func unisolate(s string) string { return strings.NewReplacer("\u2068", "", "\u2069", "").Replace(s) }

// TestEveryCustomerRouteSaysItsRefusals: a refusal a customer's handler
// returns as another package worded it reaches the error page said in
// the customer's language (the routes' withLocale), with its kind.
func TestEveryCustomerRouteSaysItsRefusals(t *testing.T) {
	h, c, _ := frenchPage(t)
	c.Request().Header.Set("Accept-Language", "fr")
	english := apperr.New(apperr.IllegalTransition, "This request expired before it was decided.")
	routes := h.withLocale([]kit.Route{kit.GET("/x", func(echo.Context) error { return english }, kit.Anyone)})
	err := routes[0].Handler(c)
	e, ok := apperr.As(err)
	if !ok || e.Kind != apperr.IllegalTransition || e.Message != "Nous n’avons pas pu faire cela. Veuillez réessayer dans une minute, ou contacter l’entreprise si le problème persiste." {
		t.Errorf("the handler's refusal reaches the page as %v", err)
	}
}
