package customer_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/text/language"

	"countersign/internal/locale"
	"countersign/web/webtest"
)

// TestTheReceiptAreaSpeaksFrenchAndArabic: the mail link's page, a mail
// link that does not open, a confirmation link that does not open, a
// refusal from internal/confirmation on the link page and the passkeys
// list say exactly the catalogue's French or Arabic, with the business's
// name and the passkey's isolated (<bdi>) in the sentence.
func TestTheReceiptAreaSpeaksFrenchAndArabic(t *testing.T) {
	t.Parallel()
	b := webtest.New(t, webtest.WithShop(), webtest.WithCustomerStage())
	srv := b.ServeAnother(t, webtest.WithPasskeys())
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	origin := "http://localhost:" + port
	pk := &webtest.Stack{Server: &httptest.Server{URL: origin}, Store: b.Store, Mail: b.Mail, Links: b.Links}
	inv, link := b.PendingRefund(t)
	c := pk.Client(t)
	withLanguage(c, "fr")

	mailLink := c.Get(c.MailLink(link, c.Get(link)))
	doc := mailLink.Doc(t)
	if got := strings.TrimSpace(doc.Find("#mail-link-title").Text()); got != "Vérifier et décider" {
		t.Errorf("the mail link's heading %q", got)
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid="mail-link-continue"]`).Text()); got != "Continuer vers la demande" {
		t.Errorf("the mail link's button %q", got)
	}
	opened := doc.Find(`[data-testid="mail-link"] > p`).First()
	if got := webtest.Squash(opened.Text()); got != "Vous avez ouvert le lien que Harbour & Pine vous a envoyé par e-mail au sujet de :" {
		t.Errorf("the mail link's sentence %q", got)
	}
	if got := opened.Find("bdi").Text(); got != webtest.ShopName {
		t.Errorf("the shop's name is not isolated in the sentence: <bdi>%q", got)
	}
	if until := doc.Find(`[data-testid="mail-link"] time`); !strings.HasPrefix(webtest.Squash(until.Parent().Parent().Text()), "Le lien fonctionne une seule fois") ||
		until.AttrOr("datetime", "") == "" {
		t.Errorf("until: %q", until.Parent().Parent().Text())
	}

	withLanguage(c, "ar")
	res := c.Get("/m/" + strings.Repeat("A", 43))
	if got := webtest.TextByTestID(res, t, "link-problem-title"); res.StatusCode != http.StatusNotFound || got != "لا نتعرف على هذا الرابط" {
		t.Errorf("an unknown mail link in Arabic: %d %q", res.StatusCode, got)
	}
	if got := webtest.TextByTestID(res, t, "link-problem-next"); got != "افتحوا أحدث بريد إلكتروني أرسلناه إليكم، أو اطلبوا بريدًا جديدًا من صفحة الطلب." {
		t.Errorf("what to do next, in Arabic: %q", got)
	}
	withLanguage(c, "fr")
	res = c.Get("/c/not-a-link")
	if got := webtest.TextByTestID(res, t, "link-problem-title"); got != "Nous ne reconnaissons pas ce lien" && got != "Ce lien est endommagé" {
		t.Errorf("a confirmation link that does not open, in French: %q", got)
	}

	// The passkeys, after a decision by the mail's link and a passkey added.
	c.SpendMailLink(c.MailLink(link, c.Get(link)))
	declineAs(t, c, inv.ID)
	// Another package's refusal, said by its code in the customer's language.
	other := pk.Client(t)
	withLanguage(other, "fr")
	if got := webtest.Squash(webtest.TextByTestID(other.Get(link), t, "prove-problem")); got != "Il n’y a plus rien à décider pour cette demande : "+
		"elle a été décidée, remplacée ou retirée, ou le délai pour décider est écoulé. Aucun code ni lien n’est nécessaire. "+
		"Demandez à l’assistant si vous souhaitez autre chose." {
		t.Errorf("nothing to decide, in French: %q", got)
	}
	if _, status, r := addCustomerPasskey(t, c, inv.ID, origin); status != http.StatusOK {
		t.Fatalf("adding a passkey: %d %+v", status, r)
	}
	list := c.Get("/requests/" + inv.ID + "/passkeys").Doc(t)
	if got := webtest.Squash(list.Find("#passkeys-heading").Text()); got != "Vos clés d’accès pour Harbour & Pine" {
		t.Errorf("the passkeys' heading %q", got)
	}
	if got := webtest.Squash(list.Find(`[data-testid="passkey-remove"]`).Text()); got != "Supprimer la clé d’accès Clé d’accès" {
		t.Errorf("the remove link reads %q to a screen reader", got)
	}
	if got := webtest.Squash(list.Find(`[data-testid="passkey-last-used"]`).Text()); got != "Pas encore utilisée" {
		t.Errorf("last used %q", got)
	}
}

// TestThePasskeyLimitIsCountedInEveryLanguage: the passkeys page's
// sentence on how many one may have takes each language's plural form
// for 0, 1, 2, 5, 11 and 100 (Arabic's six).
func TestThePasskeyLimitIsCountedInEveryLanguage(t *testing.T) {
	t.Parallel()
	cat, err := locale.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := map[language.Tag]map[int]string{
		language.English: {0: "You can have up to 0.", 1: "You can have 1 passkey.", 2: "You can have up to 2.", 5: "You can have up to 5.",
			11: "You can have up to 11.", 100: "You can have up to 100."},
		language.French: {0: "Vous pouvez en avoir 0 au maximum.", 1: "Vous pouvez en avoir 1 au maximum.", 2: "Vous pouvez en avoir jusqu’à 2.",
			5: "Vous pouvez en avoir jusqu’à 5.", 11: "Vous pouvez en avoir jusqu’à 11.", 100: "Vous pouvez en avoir jusqu’à 100."},
		language.German: {0: "Sie können bis zu 0 haben.", 1: "Sie können höchstens 1 Passkey haben.", 2: "Sie können bis zu 2 haben.",
			5: "Sie können bis zu 5 haben.", 11: "Sie können bis zu 11 haben.", 100: "Sie können bis zu 100 haben."},
		language.Spanish: {0: "Puede tener hasta 0.", 1: "Puede tener como máximo 1.", 2: "Puede tener hasta 2.", 5: "Puede tener hasta 5.",
			11: "Puede tener hasta 11.", 100: "Puede tener hasta 100."},
		language.Arabic: {0: "لا يمكنكم إضافة أي مفتاح مرور.", 1: "يمكنكم الاحتفاظ بمفتاح واحد فقط.", 2: "يمكنكم الاحتفاظ بمفتاحين على الأكثر.",
			5: "يمكنكم الاحتفاظ بما يصل إلى 5 مفاتيح.", 11: "يمكنكم الاحتفاظ بما يصل إلى 11 مفتاحًا.", 100: "يمكنكم الاحتفاظ بما يصل إلى 100 مفتاح."},
	}
	for tag, counts := range want {
		l := cat.For(tag)
		for n, tail := range counts {
			got, err := l.Localize("receipt.passkeys.intro", n, locale.Params{"Shop": webtest.ShopName})
			if err != nil || !strings.HasSuffix(got, tail) || !strings.Contains(got, webtest.ShopName) {
				t.Errorf("%s, %d: %q (%v), want it to end %q", tag, n, got, err, tail)
			}
		}
	}
}
