package httpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
)

// ExampleLoadFile loads a small description file
// (testdata/example/plans.json: one object kind and one action, kept out of
// testdata's top level, whose files the conformance test runs against the
// demo shop) and asks the described system for a quote. The system is an
// httptest server here; the file names the environment variable that holds
// its address, and Config.Getenv supplies it.
func ExampleLoadFile() {
	system := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/customers":
			_ = json.NewEncoder(w).Encode(map[string]any{"data": []any{map[string]any{"id": "c1", "email": "ada@example.com"}}})
		case r.Method == http.MethodGet && r.URL.Path == "/plans/p1":
			_ = json.NewEncoder(w).Encode(map[string]any{"id": "p1", "customer": "c1", "name": "Team", "seats": 3, "status": "active", "version": 7})
		default:
			http.NotFound(w, r)
		}
	}))
	defer system.Close()

	plans, err := httpadapter.LoadFile("testdata/example/plans.json", httpadapter.Config{
		Getenv: func(name string) string { return map[string]string{"PLANS_URL": system.URL}[name] },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, a := range plans.Actions() {
		fmt.Printf("%s.%s: %s (%s)\n", plans.Name(), a.Name, a.Title, a.Risk)
	}

	customer := adapter.Principal{CustomerRef: "ada@example.com"}
	quote, err := plans.DryRun(context.Background(), customer, "change_seats", json.RawMessage(`{"plan_id": "p1", "seats": 5}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(quote.Title)
	for _, l := range quote.Lines {
		fmt.Printf("  %s: %s → %s\n", l.Label, l.From, l.To)
	}
	fmt.Println(" ", quote.Consequences[0])
	fmt.Printf("[%s] [%s]\n", quote.ConfirmLabel, quote.DeclineLabel)
	// Output:
	// plans.change_seats: Change the seats of a plan (reversible)
	// Change Team to 5 seats
	//   Seats: 3 → 5
	//   The next invoice counts 5 seats.
	// [Change seats] [Keep the seats]
}
