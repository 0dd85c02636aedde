package gqlshop

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/graph-gophers/graphql-go"
)

// Schema is the shop's GraphQL schema: customers by e-mail, orders by id
// or by customer in pages (connections with pageInfo), refunds by order or
// by idempotency key, and the refundCreate mutation, whose refusals are
// userErrors with a code.
const Schema = `
schema { query: Query mutation: Mutation }

type Query {
  customers(email: String!): [Customer!]!
  order(id: ID!): Order
  orders(customerId: ID!, first: Int = 2, after: String): OrderConnection!
  refunds(orderId: ID, idempotencyKey: String, first: Int = 2, after: String): RefundConnection!
}

type Mutation {
  refundCreate(input: RefundInput!): RefundPayload!
}

input RefundInput {
  orderId: ID!
  amountCents: Int!
  reason: String!
  idempotencyKey: String!
}

type Customer { id: ID! email: String! name: String! }

type Order {
  id: ID!
  number: String!
  customerId: ID!
  title: String!
  status: String!
  totalCents: Int!
  refundedCents: Int!
  refundableCents: Int!
  currency: String!
  version: Int!
}

type Refund {
  id: ID!
  kind: String!
  orderId: ID!
  amountCents: Int!
  currency: String!
  reason: String!
  idempotencyKey: String!
  createdAt: String!
}

type RefundPayload { refund: Refund userErrors: [UserError!]! }

type UserError { code: String! field: [String!] message: String! }

type PageInfo { hasNextPage: Boolean! endCursor: String }

type OrderConnection { nodes: [Order!]! pageInfo: PageInfo! }

type RefundConnection { nodes: [Refund!]! pageInfo: PageInfo! }
`

// resolver answers the schema from the shop's records.
type resolver struct{ s *Shop }

// Customer is a customer of the shop.
type Customer struct {
	ID    graphql.ID
	Email string
	Name  string
}

// Order is an order; RefundedCents grows with each refund and Version
// with each change.
type Order struct {
	ID            graphql.ID
	Number        string
	CustomerID    graphql.ID
	Title         string
	Status        string
	TotalCents    int32
	RefundedCents int32
	Currency      string
	Version       int32
}

// RefundableCents is what is left to refund.
func (o *Order) RefundableCents() int32 { return o.TotalCents - o.RefundedCents }

// Refund is a refund of an order, recorded with the key it was made under.
type Refund struct {
	ID             graphql.ID
	Kind           string // always "refund.created", what the effect is
	OrderID        graphql.ID
	AmountCents    int32
	Currency       string
	Reason         string
	IdempotencyKey string
	CreatedAt      string
}

type pageInfo struct {
	HasNextPage bool
	EndCursor   *string
}

type orderConnection struct {
	Nodes    []*Order
	PageInfo pageInfo
}

type refundConnection struct {
	Nodes    []*Refund
	PageInfo pageInfo
}

type userError struct {
	Code    string
	Field   *[]string
	Message string
}

type refundPayload struct {
	Refund     *Refund
	UserErrors []userError
}

// page cuts list after the cursor (the index of the last item read, as
// text) to first items.
func page[T any](list []T, first int32, after *string) ([]T, pageInfo) {
	start := 0
	if after != nil {
		n, err := strconv.Atoi(*after)
		if err == nil && n >= 0 && n < len(list) {
			start = n + 1
		} else {
			start = len(list)
		}
	}
	n := 2
	if first > 0 {
		n = int(first)
	}
	end := min(start+n, len(list))
	out := list[start:end]
	info := pageInfo{HasNextPage: end < len(list)}
	if len(out) > 0 {
		c := strconv.Itoa(end - 1)
		info.EndCursor = &c
	}
	return out, info
}

func (r *resolver) Customers(args struct{ Email string }) []*Customer {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var out []*Customer
	for _, c := range r.s.customers {
		if strings.EqualFold(c.Email, args.Email) {
			cp := *c
			out = append(out, &cp)
		}
	}
	return out
}

func (r *resolver) Order(args struct{ ID graphql.ID }) *Order {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if o := r.s.order(args.ID); o != nil {
		cp := *o
		return &cp
	}
	return nil
}

func (r *resolver) Orders(args struct {
	CustomerID graphql.ID
	First      int32
	After      *string
}) orderConnection {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var mine []*Order
	for _, o := range r.s.orders {
		if o.CustomerID == args.CustomerID {
			cp := *o
			mine = append(mine, &cp)
		}
	}
	nodes, info := page(mine, args.First, args.After)
	r.s.pages.Add(1)
	return orderConnection{Nodes: nodes, PageInfo: info}
}

func (r *resolver) Refunds(args struct {
	OrderID        *graphql.ID
	IdempotencyKey *string
	First          int32
	After          *string
}) refundConnection {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var match []*Refund
	for _, rf := range r.s.refunds {
		if (args.OrderID == nil || rf.OrderID == *args.OrderID) && (args.IdempotencyKey == nil || rf.IdempotencyKey == *args.IdempotencyKey) {
			cp := *rf
			match = append(match, &cp)
		}
	}
	nodes, info := page(match, args.First, args.After)
	return refundConnection{Nodes: nodes, PageInfo: info}
}

// refundInput is RefundInput.
type refundInput struct {
	OrderID        graphql.ID
	AmountCents    int32
	Reason         string
	IdempotencyKey string
}

// shopError is an error of the shop's resolvers, with its code in the
// error's extensions.
type shopError struct{ code, message string }

func (e *shopError) Error() string { return e.message }

// Extensions puts the code where GraphQL clients read it.
func (e *shopError) Extensions() map[string]any { return map[string]any{"code": e.code} }

// RefundCreate refunds part of an order once per idempotency key: a key
// seen before answers the refund made under it, and a refund of more than
// is left is refused as the user error AMOUNT_TOO_LARGE.
func (r *resolver) RefundCreate(ctx context.Context, args struct{ Input refundInput }) (*refundPayload, error) {
	in := args.Input
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	for _, rf := range r.s.refunds {
		if rf.IdempotencyKey == in.IdempotencyKey {
			cp := *rf
			return &refundPayload{Refund: &cp, UserErrors: []userError{}}, nil
		}
	}
	refuse := func(code, field, msg string) (*refundPayload, error) {
		f := []string{"input", field}
		return &refundPayload{UserErrors: []userError{{Code: code, Field: &f, Message: msg}}}, nil
	}
	o := r.s.order(in.OrderID)
	switch {
	case o == nil:
		return refuse("NOT_FOUND", "orderId", "No such order.")
	case o.Status != "paid":
		return refuse("ORDER_NOT_REFUNDABLE", "orderId", fmt.Sprintf("The order is %s.", o.Status))
	case in.AmountCents <= 0:
		return refuse("INVALID_AMOUNT", "amountCents", "The amount must be positive.")
	case in.AmountCents > o.RefundableCents():
		return refuse("AMOUNT_TOO_LARGE", "amountCents", "The amount is more than is left to refund.")
	}
	rf := &Refund{ID: graphql.ID(fmt.Sprintf("re_%d", len(r.s.refunds)+1)), Kind: "refund.created", OrderID: o.ID, AmountCents: in.AmountCents,
		Currency: o.Currency, Reason: in.Reason, IdempotencyKey: in.IdempotencyKey, CreatedAt: r.s.now().Format("2006-01-02T15:04:05Z")}
	r.s.refunds = append(r.s.refunds, rf)
	o.RefundedCents += in.AmountCents
	o.Version++
	if r.s.failAfterCommit {
		r.s.failAfterCommit = false
		return nil, &shopError{code: "INTERNAL", message: "The refund was recorded, then the shop failed."}
	}
	cp := *rf
	return &refundPayload{Refund: &cp, UserErrors: []userError{}}, nil
}
