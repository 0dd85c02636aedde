// Package httpadapter connects a business system described in a file: a
// JSON document (checked against the JSON Schema in schema.json when it is
// loaded) that says where the system is and how it authenticates, how a
// customer's e-mail maps to their account, how objects are read and
// resolved, which read tools and narrow write actions it offers, and how
// its error answers map to refused, not_sent and unknown. Conditions,
// guards and computed values are CEL expressions (cel.dev); texts and
// paths are templates with {expression} placeholders.
//
// A loaded file is an adapter.System with the same guarantees as a
// hand-written adapter: the target is resolved from the principal's own
// objects and never guessed, a dry run changes nothing, a write is sent
// once per idempotency key (the request ledger stops a repeat; the file
// says how the key reaches the system: a header, a body field, or {key}
// in the request), a lost answer is Unknown and
// reconciled by Lookup and Verify, and read tools copy only allowlisted
// fields. Bodies go as JSON or as form fields (form.go); requests carry a
// static secret, an OAuth 2 token (oauth.go) or an HMAC signature
// (hmac.go), every secret from an environment variable named in the file.
//
// README.md beside this file is the format's reference, with the demo
// shop's description file (testdata/shop-http.json) as its worked example.
package httpadapter
