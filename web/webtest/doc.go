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
// A helper belongs here only when the tests of more than one package use it;
// one audience's helpers stay in that audience's test files. Only test files
// import this package (internal/depcheck and the linter's depguard rules
// refuse it elsewhere). Each test package that uses it calls dbtest.Main
// from its TestMain.
package webtest
