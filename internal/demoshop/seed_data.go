package demoshop

import "time"

func seedProducts(now time.Time) []ProductFixture {
	restock := now.AddDate(0, 0, 12)
	return []ProductFixture{
		{SKU: "LAMP-WAL-01", Name: "Walnut desk lamp", PriceCents: 8900, CostCents: 3100, Stock: 14,
			Description:   "Solid walnut base, linen shade, warm 2700 K LED bulb included.",
			SupplierNotes: "Supplier raised unit cost 8% from next batch."},
		{SKU: "POUR-CER-02", Name: "Ceramic pour-over set", PriceCents: 3800, CostCents: 1200, Stock: 32,
			Description: "Hand-glazed dripper with a 600 ml carafe."},
		{SKU: "FILT-100", Name: "Paper filters, pack of 100", PriceCents: 450, CostCents: 90, Stock: 240,
			Description: "Unbleached filters that fit the ceramic pour-over set."},
		{SKU: "THROW-LIN-03", Name: "Linen throw blanket", PriceCents: 6400, CostCents: 2500, Stock: 0,
			RestockAt: &restock, Description: "Stonewashed European linen, 130 × 170 cm."},
		{SKU: "HP-NC-700", Name: "Noise-cancelling headphones", PriceCents: 19900, CostCents: 11200, Stock: 6,
			Reserved: 2, Description: "Over-ear, 30-hour battery, USB-C."},
		{SKU: "MAT-STD-04", Name: "Standing desk mat", PriceCents: 5400, CostCents: 1600, Stock: 21,
			Reserved: 1, Description: "Anti-fatigue foam mat with bevelled edges."},
		{SKU: "SOCK-MER-3", Name: "Merino wool socks, 3 pairs", PriceCents: 2400, CostCents: 700, Stock: 88,
			Description: "Mid-weight merino blend, sizes S to XL."},
		{SKU: "SKIL-CI-26", Name: "Cast-iron skillet, 26 cm", PriceCents: 4500, CostCents: 1500, Stock: 0,
			Description: "Pre-seasoned, oven safe to 260 °C.", SupplierNotes: "Discontinued by the foundry."},
		{SKU: "BOARD-BAM-L", Name: "Bamboo cutting board, large", PriceCents: 3200, CostCents: 900, Stock: 17,
			Description: "Juice groove on one side, flat on the other."},
		{SKU: "BOTL-GLS-750", Name: "Glass water bottle, 750 ml", PriceCents: 2200, CostCents: 600, Stock: 3,
			Description: "Borosilicate glass with a silicone sleeve."},
	}
}

func seedCustomers(now time.Time) []seedCustomer {
	in := func(days int) time.Time { return now.AddDate(0, 0, days) }
	berlin := &Address{Name: "Hannah Weiss", Line1: "Torstraße 112", City: "Berlin", PostalCode: "10119", Country: "DE"}
	lyon := &Address{Name: "Camille Dubois", Line1: "14 rue Mercière", City: "Lyon", PostalCode: "69002", Country: "FR"}
	hamburg := &Address{Name: "Lena Fischer", Line1: "Grindelallee 80", Line2: "3. OG", City: "Hamburg", PostalCode: "20146", Country: "DE"}
	return []seedCustomer{
		{
			CustomerFixture: CustomerFixture{Name: "Jordan Lee", Email: DemoCustomerEmail,
				Sites: []string{"acme.example", "acme.shop"}, RiskScore: 12,
				InternalNotes: "Long-time customer; asked about annual billing in March."},
			subs: []SubscriptionFixture{
				{Site: "acme.example", Plan: "Pro", PriceCents: 4900, PeriodEnd: in(18), MarginCents: 3900},
				{Site: "acme.shop", Plan: "Starter", PriceCents: 1200, PeriodEnd: in(9), MarginCents: 800},
				// Cancelled at period end: the demo's reinstatement to confirm.
				{Site: "acme.example", Plan: "Photo add-on", PriceCents: 500, PeriodEnd: in(14), Status: SubscriptionCancelled,
					CancelAtPeriodEnd: true, CancelReason: "missing_feature", MarginCents: 400},
			},
			orders: []seedOrder{
				{key: "demo-5d", deliveredDaysAgo: 5, items: []seedItem{{"POUR-CER-02", 1}, {"FILT-100", 2}}, shippingCents: 599},
				{key: "demo-20d", deliveredDaysAgo: 20, items: []seedItem{{"LAMP-WAL-01", 1}}, shippingCents: 1200,
					damaged: true, caseNotes: "Lamp base arrived cracked; customer sent a photo."},
				{key: "demo-45d", deliveredDaysAgo: 45, items: []seedItem{{"THROW-LIN-03", 1}}, shippingCents: 800},
				{key: "demo-90d", deliveredDaysAgo: 90, items: []seedItem{{"HP-NC-700", 1}}},
				{key: "demo-open", placedDaysAgo: 1, status: FulfilmentPending, items: []seedItem{{"MAT-STD-04", 1}}, shippingCents: 900},
			},
		},
		{
			CustomerFixture: CustomerFixture{Name: "Maya Okafor", Email: "maya@brightleaf.example",
				Sites: []string{"brightleaf.example", "brightleaf.shop"}},
			subs: []SubscriptionFixture{
				{Site: "brightleaf.example", Plan: "Pro", PriceCents: 4900, PeriodEnd: in(11)},
				{Site: "brightleaf.shop", Plan: "Pro", PriceCents: 4900, PeriodEnd: in(25)},
			},
			orders: []seedOrder{
				{key: "maya-20d", deliveredDaysAgo: 20, items: []seedItem{{"BOARD-BAM-L", 2}}, shippingCents: 700},
			},
		},
		{
			CustomerFixture: CustomerFixture{Name: "Marcus Chen", Email: "marcus.chen@example.com",
				Sites: []string{"chenphoto.example"}, RiskScore: 54,
				InternalNotes: "Card failed twice last month; dunning email sent."},
			subs: []SubscriptionFixture{
				{Plan: "Business", PriceCents: 9900, PeriodEnd: in(14), BalanceCents: 1850, CardDeclined: true,
					DeclineCode: "insufficient_funds", InternalNotes: "Overage from extra storage."},
			},
		},
		{
			CustomerFixture: CustomerFixture{Name: "Priya Natarajan", Email: "priya@natarajan-design.example",
				Sites: []string{"natarajan-design.example"}},
			subs: []SubscriptionFixture{{Plan: "Starter", PriceCents: 1200, PeriodEnd: in(3)}},
			orders: []seedOrder{
				{key: "priya-open-1", placedDaysAgo: 2, status: FulfilmentPending, items: []seedItem{{"SOCK-MER-3", 2}}, shippingCents: 500},
				{key: "priya-open-2", placedDaysAgo: 3, status: FulfilmentFulfilled, items: []seedItem{{"BOTL-GLS-750", 1}}, shippingCents: 500},
				{key: "priya-open-3", placedDaysAgo: 4, status: FulfilmentShipped, items: []seedItem{{"BOARD-BAM-L", 1}}, shippingCents: 700},
			},
		},
		{
			CustomerFixture: CustomerFixture{Name: "Tomás Ortega", Email: "tomas@ortega.example", Sites: []string{"ortega.example"}},
			orders: []seedOrder{
				{key: "tomas-lost", placedDaysAgo: 28, status: FulfilmentNotReceived, items: []seedItem{{"HP-NC-700", 1}},
					shippingCents: 1500, caseNotes: "Carrier shows delivered to a neighbour; customer says nothing arrived."},
			},
		},
		{
			CustomerFixture: CustomerFixture{Name: "Hannah Weiss", Email: "hannah.weiss@example.de", Sites: []string{"weiss-keramik.example"}},
			subs: []SubscriptionFixture{
				{Plan: "Pro", PriceCents: 4900, PeriodEnd: in(16), Status: SubscriptionCancelled, CancelAtPeriodEnd: true,
					CancelReason: "too_expensive"},
			},
			orders: []seedOrder{
				{key: "hannah-45d", deliveredDaysAgo: 45, items: []seedItem{{"POUR-CER-02", 1}}, shippingCents: 900, address: berlin},
			},
		},
		{
			CustomerFixture: CustomerFixture{Name: "Sam Rivera", Email: "sam.rivera@example.net", Sites: []string{"rivera-gear.example"},
				RiskScore: 87, FraudFlag: true, InternalNotes: "Three chargebacks in the last year. Do not refund without review."},
			orders: []seedOrder{
				{key: "sam-5d", deliveredDaysAgo: 5, items: []seedItem{{"HP-NC-700", 2}}, shippingCents: 0},
			},
		},
		{
			CustomerFixture: CustomerFixture{Name: "Olivia Bennett", Email: "olivia@bennett-bakery.example", Sites: []string{"bennett-bakery.example"}},
			subs:            []SubscriptionFixture{{Plan: "Pro", PriceCents: 49000, Interval: "year", PeriodEnd: in(200)}},
			orders: []seedOrder{
				{key: "olivia-20d", deliveredDaysAgo: 20, items: []seedItem{{"SKIL-CI-26", 1}}, shippingCents: 800},
				{key: "olivia-90d", deliveredDaysAgo: 90, items: []seedItem{{"BOARD-BAM-L", 1}, {"SOCK-MER-3", 1}}, shippingCents: 600},
			},
		},
		{
			CustomerFixture: CustomerFixture{Name: "Kenji Watanabe", Email: "kenji@watanabe.example",
				Sites: []string{"kenji-notes.example", "watanabe-shop.example"}},
			subs: []SubscriptionFixture{
				{Site: "kenji-notes.example", Plan: "Starter", PriceCents: 1200, PeriodEnd: in(6)},
				{Site: "watanabe-shop.example", Plan: "Pro", PriceCents: 4900, PeriodEnd: in(21)},
			},
		},
		{
			// The shop writes to Fatima in Arabic: the demo's customer in a
			// right-to-left language.
			CustomerFixture: CustomerFixture{Name: "Fatima Al-Sayed", Email: "fatima@alsayed.example", Sites: []string{"alsayed-studio.example"},
				Locale: "ar"},
			orders: []seedOrder{
				{key: "fatima-10d", deliveredDaysAgo: 10, items: []seedItem{{"SKIL-CI-26", 1}, {"BOARD-BAM-L", 1}}, shippingCents: 1100,
					damaged: true, caseNotes: "Skillet handle snapped in transit; board fine."},
				{key: "fatima-6d", deliveredDaysAgo: 6, items: []seedItem{{"BOTL-GLS-750", 1}}, shippingCents: 600,
					damaged: true, caseNotes: "Bottle arrived cracked; customer sent a photo."},
			},
		},
		{
			CustomerFixture: CustomerFixture{Name: "Lena Fischer", Email: "lena.fischer@example.de", Sites: []string{"fischer-fotografie.example"},
				Locale: "de"},
			orders: []seedOrder{
				{key: "lena-45d", deliveredDaysAgo: 45, items: []seedItem{{"LAMP-WAL-01", 1}}, shippingCents: 1400, address: hamburg},
				{key: "lena-open", placedDaysAgo: 1, status: FulfilmentPending, items: []seedItem{{"FILT-100", 3}}, shippingCents: 500, address: hamburg},
			},
		},
		{
			CustomerFixture: CustomerFixture{Name: "Noah Williams", Email: "noah@williams-co.example", Sites: []string{"williams-co.example"}},
			subs:            []SubscriptionFixture{{Plan: "Business", PriceCents: 9900, PeriodEnd: in(8), BalanceCents: 2400}},
			orders: []seedOrder{
				{key: "noah-90d", deliveredDaysAgo: 90, items: []seedItem{{"MAT-STD-04", 2}}, shippingCents: 900},
			},
		},
		{
			CustomerFixture: CustomerFixture{Name: "Camille Dubois", Email: "camille.dubois@example.fr", Sites: []string{"atelier-dubois.example"},
				Locale: "fr"},
			orders: []seedOrder{
				{key: "camille-8d", deliveredDaysAgo: 8, items: []seedItem{{"POUR-CER-02", 1}}, shippingCents: 900, address: lyon,
					damaged: true, caseNotes: "Carafe arrived chipped; customer sent a photo."},
			},
		},
	}
}
