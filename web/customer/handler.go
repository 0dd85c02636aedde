// Package customer is the end customer's side of the console: the link
// page that shows a request exactly as its quote says and asks who they
// are, their requests, and the confirm, decline and stop that decide one
// request. A customer decides here only what they proved is theirs.
//
// The pages speak for the business the customer deals with, not for the
// console: its name and logo (adapter.Brand) in the header and the title,
// times in the customer's own zone once their browser told it (the
// cs_zone cookie customer_frame.go reads), else in the business's, always
// naming the zone. My requests lists only the customer's own actions
// (adapter.ActionSpec.ForCustomer) in three groups, and a completed
// request offers its signed receipt (customer_receipt.go).
package customer

import (
	"context"
	"log/slog"
	"time"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/controlplane"
	"countersign/internal/custkeys"
	"countersign/internal/lists"
	"countersign/internal/locale"
	"countersign/internal/safehttp"
	"countersign/web/kit"
	"countersign/web/layout"
)

// Config is what the customer's pages need.
type Config struct {
	Control *controlplane.Service
	// Lists reads the lists and counts the pages show.
	Lists *lists.Service
	// Confirmations shows customers their requests and checks their proof
	// of who they are; nil leaves links out (customers then decide signed in).
	Confirmations ConfirmationLinks
	// Registry names each system to its customers (adapter.BrandOf); nil
	// leaves the pages unbranded.
	Registry *adapter.Registry
	// Receipt signs the receipt of a completed request, the same JWS the
	// assistant's API serves; nil offers no receipt download.
	Receipt func(ctx context.Context, inv controlplane.Invocation) (string, error)
	// PublicBase is the console's public address, where the receipts'
	// keys are published.
	PublicBase string
	// Passkeys registers returning customers' passkeys and checks the
	// decisions made with them; nil (or off) offers none.
	Passkeys *custkeys.Service
	// LogoFetch is how the businesses' logos are fetched: the zero value
	// in production (public https addresses only, 5 seconds); tests set
	// its Test allowance to reach their own logo server.
	LogoFetch safehttp.Options
	// Catalogue is the messages the pages are written from; nil is the
	// process's catalogue (locale.Installed: the shipped one, with the
	// installation's -locales-dir files).
	Catalogue *locale.Catalogue
	// Pseudo renders every page in the pseudo-locale (locale.Pseudo),
	// whatever the customer chose: the test that finds text not taken
	// from a catalogue sets it, with a Catalogue loaded WithPseudo.
	Pseudo bool
}

// Handler serves the customer's routes.
type Handler struct {
	*layout.Frame
	cfg   Config
	logos *logos
	// linkLocales keeps the record locale of links' customers for their
	// pages before any proof.
	linkLocales *linkLocales
}

// New builds the customer's handlers on the pages' frame.
func New(frame *layout.Frame, cfg Config) *Handler {
	var log *slog.Logger
	var now func() time.Time
	if frame != nil && frame.Site != nil {
		log, now = frame.Site.Log, frame.Site.Now
	}
	return &Handler{Frame: frame, cfg: cfg, logos: newLogos(cfg.LogoFetch, log, now), linkLocales: newLinkLocales(now)}
}

// Routes is the customer's part of the route table. The routes are public:
// a customer with a link's proof has no account. Each handler checks that
// the request is this customer's.
func (h *Handler) Routes() []kit.Route {
	customers := kit.For(accounts.Customer)
	return h.withLocale([]kit.Route{
		kit.GET("/c/:token", h.handleConfirmationLink, kit.Anyone),
		kit.POST("/c/:token/code", h.handleConfirmationCode, kit.Anyone),
		kit.POST("/c/:token/verify", h.handleConfirmationVerify, kit.Anyone),
		// A returning customer's passkey proves them for the link's
		// request and decides it; the handler checks the passkey is theirs.
		kit.POST("/c/:token/passkey/begin", h.handlePasskeyDecideBegin, kit.Anyone),
		kit.POST("/c/:token/passkey", h.handlePasskeyDecide, kit.Anyone),
		kit.POST("/c/:token/mail", h.handleConfirmationMail, kit.Anyone),
		// The mail's "Review and decide": the GET shows one button, whose
		// POST spends the link and proves the browser is the customer.
		kit.GET("/m/:token", h.handleMailLink, kit.Anyone),
		kit.POST("/m/:token", h.handleMailLinkSpend, kit.Anyone),
		// Anyone reaches it; the handler lists only the customer this
		// browser proved it is (an account or a link's proof), never on a link alone.
		// A business's logo, served from here so that no third party
		// learns of a customer's visit.
		kit.GET("/brand/:system/logo", h.handleLogo, kit.Anyone),
		// The visible language switch, on every customer page.
		kit.POST("/locale", h.handleLocaleSwitch, kit.Anyone),
		kit.GET("/requests", h.handleMyRequests, customers),
		kit.GET("/requests/:id", h.handleCustomerRequest, customers),
		kit.GET("/requests/:id/status", h.handleCustomerRequestStatus, customers),
		kit.GET("/requests/:id/receipt", h.handleCustomerReceipt, customers),
		kit.POST("/requests/:id/confirm", h.handleCustomerConfirm, customers),
		kit.POST("/requests/:id/decline", h.handleCustomerDecline, customers),
		kit.POST("/requests/:id/stop", h.handleCustomerStop, customers),
		kit.POST("/requests/:id/passkey/begin", h.handlePasskeyRegisterBegin, customers),
		kit.POST("/requests/:id/passkey", h.handlePasskeyRegister, customers),
		kit.GET("/requests/:id/passkeys", h.handleCustomerPasskeys, customers),
		kit.GET("/requests/:id/passkeys/:key/remove", h.handleCustomerPasskeyRemoveConfirm, customers),
		kit.POST("/requests/:id/passkeys/:key/remove", h.handleCustomerPasskeyRemove, customers),
	})
}
