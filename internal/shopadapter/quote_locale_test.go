package shopadapter_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"countersign/internal/adapter"
	"countersign/internal/demoshop"
	"countersign/internal/shopadapter"
)

// shownWords is what a customer reading locale reads of a quote: its
// texts, line by line as "label: from → to".
type shownWords struct {
	Title        string
	Lines        []string
	Consequences []string
	Constraints  []string
	Confirm      string
	Decline      string
	Customer     []string `json:",omitempty"`
}

func shown(q adapter.Quote, locale string) shownWords {
	q = q.In(locale)
	w := shownWords{Title: q.Title, Consequences: q.Consequences, Constraints: q.Constraints,
		Confirm: q.ConfirmLabel, Decline: q.DeclineLabel}
	for _, l := range q.Lines {
		s := l.Label + ": "
		if l.From != "" {
			s += l.From + " → "
		}
		w.Lines = append(w.Lines, s+l.To)
	}
	if c := q.Customer; c != nil {
		w.Customer = append([]string{c.Title, c.DateLabel}, c.Why...)
		w.Customer = append(w.Customer, c.MoneyArrives)
	}
	return w
}

// checkShown compares what locale shows of q with want; with
// COUNTERSIGN_PRINT_QUOTES set it prints what it got instead, for writing
// a new case (every expected string below was read by a person first).
func checkShown(t *testing.T, name string, q adapter.Quote, locale string, want shownWords) {
	t.Helper()
	got := shown(q, locale)
	if os.Getenv("COUNTERSIGN_PRINT_QUOTES") != "" {
		b, _ := json.MarshalIndent(got, "", "  ")
		t.Logf("%s in %s:\n%s", name, locale, b)
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s in %s (-want +got):\n%s", name, locale, diff)
	}
}

// TestQuotesInTheCustomersLanguage: the shop writes its quotes in English
// and carries them in French, German, Spanish and Arabic, line for line,
// from the catalogue: sentences with the customer's amounts as the
// language writes them (CLDR: "42,10 €", "42.10 €" in Arabic, without CLDR's
// right-to-left mark, the typographic minus) and dates in its long form.
// The numbers, target and flags are the written quote's.
func TestQuotesInTheCustomersLanguage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, p := b.newCustomer(t, demoshop.CustomerFixture{})
	o := b.newOrder(t, c.ID, func(f *demoshop.OrderFixture) { f.DeliveredAt = daysAgo(20); f.Currency = "eur" })
	if _, err := b.shop.CreateRefund(context.Background(), demoshop.RefundFixture{OrderID: o.ID, AmountCents: 500}); err != nil {
		t.Fatal(err)
	}
	refund, err := b.dryRun(t, p, shopadapter.ActionIssueRefund, map[string]any{"order_id": o.ID, "amount_cents": 4210, "reason_code": "changed_mind"})
	if err != nil {
		t.Fatal(err)
	}
	cancel, err := b.dryRun(t, jordan, shopadapter.ActionCancelSubscription,
		map[string]any{"subscription_id": "Pro plan for acme.example", "reason_code": "too_expensive", "effective": "end_of_period"})
	if err != nil {
		t.Fatal(err)
	}
	pending := b.newOrder(t, c.ID, func(f *demoshop.OrderFixture) {
		f.Items = append(f.Items, demoshop.ItemFixture{Name: "Brass hook", Quantity: 1, UnitPriceCents: 900},
			demoshop.ItemFixture{Name: "Linen runner", Quantity: 1, UnitPriceCents: 2900})
	})
	address, err := b.dryRun(t, p, shopadapter.ActionChangeShippingAddress, map[string]any{"order_id": pending.ID,
		"address": map[string]any{"name": "Ada Lovelace", "line1": "12 rue de la Paix", "city": "Paris", "postal_code": "75002", "country": "FR"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []adapter.Quote{refund, cancel, address} {
		if q.Locale != "en" || len(q.Translations) != 4 {
			t.Fatalf("%q is written in %q with %d translations, want en with fr, de, es, ar", q.Title, q.Locale, len(q.Translations))
		}
		for tag, w := range q.Translations {
			if len(w.Lines) != len(q.Lines) {
				t.Errorf("%q in %s has %d lines, the quote %d", q.Title, tag, len(w.Lines), len(q.Lines))
			}
			if b, _ := json.Marshal(w); strings.Contains(string(b), "shop.") {
				t.Errorf("%q in %s shows a message id: %s", q.Title, tag, b)
			}
		}
	}

	checkShown(t, "refund", refund, "fr", shownWords{
		Title: "Rembourser 42,10\u00a0€ sur la commande " + o.ID + " (Oak bookend)",
		Lines: []string{
			"Motif: changement d’avis",
			"Articles: 84,00\u00a0€",
			"Livraison: 12,00\u00a0€",
			"Vous avez payé: 96,00\u00a0€",
			"Livraison non remboursée en cas de changement d’avis: −12,00\u00a0€",
			"Frais de remise en stock (15\u202f% des articles): −12,60\u00a0€",
			"Déjà remboursé: −5,00\u00a0€",
			"Remboursable en cas de changement d’avis: 66,40\u00a0€",
			"Hors de ce remboursement (peut encore être remboursé plus tard): −24,30\u00a0€",
			"Ce remboursement: 42,10\u00a0€",
		},
		Consequences: []string{"Le remboursement est versé sur la carte utilisée pour la commande " + number(o) + ".",
			"Un remboursement ne peut pas être annulé."},
		Constraints: []string{
			"La commande a été livrée il y a 20 jours, le 23 mars 2026\u00a0: dans le délai de remboursement de 30 jours.",
			"La livraison n’est pas remboursée en cas de changement d’avis, et des frais de remise en stock de 15\u202f% sont déduits des articles.",
			"Un remboursement ne dépasse jamais le solde remboursable pour son motif, déduction faite des remboursements antérieurs.",
		},
		Confirm: "Rembourser 42,10\u00a0€",
		Decline: "Ne pas rembourser",
		Customer: []string{
			"Remboursement de 42,10\u00a0€ pour votre commande (Oak bookend)",
			"Date de commande",
			"En cas de changement d’avis, la livraison n’est pas remboursée et des frais de remise en stock de 15\u202f% sont retenus sur les articles.",
			"Un montant de 5,00\u00a0€ a déjà été remboursé sur cette commande.",
			"Ce remboursement correspond au montant demandé. Le reste remboursable, soit 24,30\u00a0€, n’en fait pas partie et peut encore être remboursé plus tard.",
			"Sous 5 à 10 jours ouvrés, sur la carte utilisée pour le paiement.",
		},
	})
	checkShown(t, "refund", refund, "ar", shownWords{
		Title: "استرداد 42.10\u00a0€ من الطلب " + o.ID + " (Oak bookend)",
		Lines: []string{
			"السبب: تغيير الرأي",
			"المنتجات: 84.00\u00a0€",
			"الشحن: 12.00\u00a0€",
			"المبلغ الذي دفعتموه: 96.00\u00a0€",
			"لا تُسترد رسوم الشحن عند تغيير رأيكم: −12.00\u00a0€",
			"رسوم إعادة التخزين (15% من المنتجات): −12.60\u00a0€",
			"مُسترد سابقًا: −5.00\u00a0€",
			"قابل للاسترداد عند تغيير رأيكم: 66.40\u00a0€",
			"غير مشمول في هذا الاسترداد (يمكن استرداده لاحقًا): −24.30\u00a0€",
			"هذا الاسترداد: 42.10\u00a0€",
		},
		Consequences: []string{
			"يُعاد مبلغ الاسترداد إلى البطاقة المستخدمة في الطلب " + number(o) + ".",
			"لا يمكن التراجع عن الاسترداد.",
		},
		Constraints: []string{
			"تم توصيل الطلب منذ 20 يومًا، في 23 مارس 2026: ضمن مهلة الاسترداد البالغة 30 يومًا.",
			"لا تُسترد رسوم الشحن عند تغيير رأيكم، وتُخصم من المنتجات رسوم إعادة تخزين بنسبة 15%.",
			"لا يتجاوز الاسترداد أبدًا الرصيد القابل للاسترداد لسببه، بعد خصم المبالغ المستردة سابقًا.",
		},
		Confirm: "استرداد 42.10\u00a0€",
		Decline: "عدم الاسترداد",
		Customer: []string{
			"استرداد 42.10\u00a0€ عن طلبكم (Oak bookend)",
			"تاريخ الطلب",
			"عند تغيير رأيكم، لا تُسترد رسوم الشحن وتُقتطع من المنتجات رسوم إعادة تخزين بنسبة 15%.",
			"تم سابقًا استرداد 5.00\u00a0€ من هذا الطلب.",
			"يغطي هذا الاسترداد المبلغ المطلوب. أما باقي المبلغ القابل للاسترداد وقدره 24.30\u00a0€ فليس جزءًا منه ويمكن استرداده لاحقًا.",
			"خلال 5 إلى 10 أيام عمل، على البطاقة التي دفعتم بها.",
		},
	})
	checkShown(t, "cancel", cancel, "fr", shownWords{
		Title: "Résilier la formule Pro du site acme.example",
		Lines: []string{
			"Statut: actif → résilié",
			"Accès jusqu’au: 30 avril 2026",
			"Prochain prélèvement: 49,00\u00a0$US le 30 avril 2026 → aucun",
			"Motif: trop cher",
		},
		Consequences: []string{
			"Vous conserverez l’accès jusqu’au 30 avril 2026.",
			"Aucun prélèvement ne sera effectué le 30 avril 2026.",
		},
		Constraints: []string{
			"Au plus une résiliation par abonnement et par jour.",
			"Jusqu’au 30 avril 2026, la résiliation peut être annulée.",
		},
		Confirm: "Résilier l’abonnement",
		Decline: "Conserver la formule",
	})
	checkShown(t, "cancel", cancel, "ar", shownWords{
		Title: "إلغاء خطة Pro للموقع acme.example",
		Lines: []string{
			"الحالة: نشط → ملغى",
			"الوصول متاح حتى: 30 أبريل 2026",
			"الدفعة التالية: 49.00\u00a0US$ في 30 أبريل 2026 → لا شيء",
			"السبب: التكلفة مرتفعة",
		},
		Consequences: []string{
			"سيبقى وصولكم متاحًا حتى 30 أبريل 2026.",
			"لن يُخصم منكم أي مبلغ في 30 أبريل 2026.",
		},
		Constraints: []string{
			"إلغاء واحد على الأكثر لكل اشتراك في اليوم.",
			"يمكن التراجع عن الإلغاء حتى 30 أبريل 2026.",
		},
		Confirm: "إلغاء الاشتراك",
		Decline: "الإبقاء على الخطة",
	})
	checkShown(t, "address", address, "fr", shownWords{
		Title: "Modifier l’adresse de livraison de la commande " + pending.ID + " (Oak bookend et 2 autres articles)",
		Lines: []string{
			"Adresse de livraison: Test Customer, 500 Market Street, Suite 210, San Francisco 94105, US → Ada Lovelace, 12 rue de la Paix, Paris 75002, FR",
		},
		Consequences: []string{
			"La commande " + number(pending) + " sera livrée à l’adresse suivante\u00a0: Ada Lovelace, 12 rue de la Paix, Paris 75002, FR.",
			"L’ancienne adresse ne sera plus utilisée pour cette commande.",
		},
		Constraints: []string{
			"L’adresse ne peut être modifiée que jusqu’à la préparation de la commande.",
		},
		Confirm: "Modifier l’adresse",
		Decline: "Garder l’adresse actuelle",
		Customer: []string{
			"Modifier l’adresse de livraison de votre commande (Oak bookend et 2 autres articles)",
			"Date de commande",
			"",
		},
	})
	checkShown(t, "address", address, "ar", shownWords{
		Title: "تغيير عنوان الشحن للطلب " + pending.ID + " (Oak bookend ومنتجان آخران)",
		Lines: []string{
			"عنوان الشحن: Test Customer, 500 Market Street, Suite 210, San Francisco 94105, US → Ada Lovelace, 12 rue de la Paix, Paris 75002, FR",
		},
		Consequences: []string{
			"سيتم شحن الطلب " + number(pending) + " إلى العنوان التالي: Ada Lovelace, 12 rue de la Paix, Paris 75002, FR.",
			"لن يُستخدم العنوان السابق لهذا الطلب بعد الآن.",
		},
		Constraints: []string{
			"لا يمكن تغيير العنوان إلا قبل تجهيز الطلب.",
		},
		Confirm: "تغيير العنوان",
		Decline: "الإبقاء على العنوان الحالي",
		Customer: []string{
			"تغيير عنوان شحن طلبكم (Oak bookend ومنتجان آخران)",
			"تاريخ الطلب",
			"",
		},
	})
}

// number is the order's reference as the shop's customers read it.
func number(o demoshop.Order) string {
	if o.Number != "" {
		return o.Number
	}
	return "#" + strings.ToUpper(o.ID[len(o.ID)-6:])
}

// TestRefundAmountsAsEachLanguageWritesThem: one order of 2 × 42.00 in
// items, in US dollars, euros and yen (which have no minor units: 4,210
// yen are amount_cents 4210), refunded 42.10 (4,210 yen): the refund line
// reads as CLDR writes the amount in each shipped language, with its
// no-break spaces, French's narrow one grouping thousands and Arabic's
// right-to-left mark.
func TestRefundAmountsAsEachLanguageWritesThem(t *testing.T) {
	t.Parallel()
	want := map[string]map[string]string{
		"usd": {"en": "$42.10", "fr": "42,10\u00a0$US", "de": "42,10\u00a0$", "es": "42,10\u00a0US$", "ar": "42.10\u00a0US$"},
		"eur": {"en": "€42.10", "fr": "42,10\u00a0€", "de": "42,10\u00a0€", "es": "42,10\u00a0€", "ar": "42.10\u00a0€"},
		"jpy": {"en": "¥4,210", "fr": "4\u202f210\u00a0¥", "de": "4.210\u00a0¥", "es": "4210\u00a0¥", "ar": "4,210\u00a0JP¥"},
	}
	b := setup(t)
	c, p := b.newCustomer(t, demoshop.CustomerFixture{})
	for _, cur := range []string{"usd", "eur", "jpy"} {
		o := b.newOrder(t, c.ID, func(f *demoshop.OrderFixture) { f.DeliveredAt = daysAgo(3); f.Currency = cur })
		q, err := b.dryRun(t, p, shopadapter.ActionIssueRefund, map[string]any{"order_id": o.ID, "amount_cents": 4210, "reason_code": "damaged"})
		if err != nil {
			t.Fatal(err)
		}
		for _, loc := range []string{"en", "fr", "de", "es", "ar"} {
			shown := q.In(loc)
			last := shown.Lines[len(shown.Lines)-1]
			if last.To != want[cur][loc] || shown.ConfirmLabel == "" || !strings.Contains(shown.ConfirmLabel, want[cur][loc]) {
				t.Errorf("%s in %s: the refund reads %q (button %q), want %q", cur, loc, last.To, shown.ConfirmLabel, want[cur][loc])
			}
		}
	}
}
