// Package webtest assembles the whole console for the tests of package web
// and its audiences (web/api, web/customer, web/console, web/kit) and of the
// journeys across them (web/journeys), as pkgsite's internal/testing does for
// its tests.
//
// New builds one Stack: the server of package web, wired as cmd/countersign
// wires it, over a fresh database (store/dbtest) with a test clock, served by
// httptest, with a user per role. Options add what a test needs:
//
//	s := webtest.New(t, webtest.WithShop(), webtest.WithAssistant())
//	c := s.Client(t)
//	c.MustSignIn(s.Users[accounts.Agent])
//	res := c.Get("/queue")
//	count := res.Doc(t).Find(`[data-testid="nav-count"]`).Text()
//
// WithShop connects the seeded demo shop over HTTP, WithAssistant adds an
// assistant with a key and an open task (Stack.Call speaks its API),
// WithCustomerStage lets customers confirm the shop's actions, WithSlack
// connects a fake Slack. Every API answer the stack serves is checked
// against the OpenAPI document when the test ends.
//
// The console is wired in one place (assemble in stack.go), so a service
// the console gains is added there once. Tests that need a console New
// does not serve use the same wiring: Assemble (taking testing.TB and a
// store) serves it over a database a benchmark seeds, without users or the
// contract check (web/console's and internal/bench's benchmarks,
// internal/assistantsim), and Stack.ServeAnother serves a second console
// over a stack's services with other session keys, a telemetry or an API
// rate.
//
// A helper belongs here only when the tests of more than one package use it;
// one audience's helpers stay in that audience's test files. Only test files
// import this package (internal/depcheck and the linter's depguard rules
// refuse it elsewhere). Each test package that uses it calls dbtest.Main
// from its TestMain.
package webtest
