// Package custkeys is the passkeys of returning customers: a customer of
// one business system (system + customer reference, as the confirmation
// links name them — not a console account) may add a passkey after a
// decision proven by the mail's link, the business's assertion or their
// account, never by a typed code, and later decide a request with it. A
// decision's assertion signs consent.Challenge of the request, its quote
// version, the digest of the quote shown and the decision, so it is
// evidence of that decision only (consent.Evidence.Verify).
//
// A customer lists and removes their passkeys (Passkeys, Remove), has at
// most a limit of them per system (DefaultLimit), and is mailed a notice
// at the contact on file whenever one is added or removed; both changes
// are audit events. Whose passkey signed a decision is checked again by
// the control plane, in the decision's transaction.
//
// The relying party is the console's, as for staff passkeys
// (factors.NewRelyingParty): off without a public URL or at an IP address.
// Ceremonies are kept server-side, single use, five minutes, in
// customer_webauthn_ceremonies (migration 00041), bound to the customer,
// the request and the purpose.
package custkeys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/internal/factors"
	"countersign/internal/locale"
	"countersign/internal/mail"
	"countersign/store"
)

// RegisterProofs are the proofs of who the customer is from which they
// may add a passkey: the mail's single-use link, the business's
// assertion, their signed-in account. A typed code is not among them: it
// can be read out to whoever asks, and a passkey added from its session
// would give that person every later request of the customer.
var RegisterProofs = []string{"link", "assertion", "account"}

// Store is what the service reads and writes (*store.Store).
type Store interface {
	CustomerWebAuthnHandle(ctx context.Context, system, customerRef string, fresh []byte) ([]byte, error)
	CustomerPasskeysOf(ctx context.Context, system, customerRef string) ([]store.CustomerPasskey, error)
	InsertCustomerPasskey(ctx context.Context, p store.CustomerPasskey, limit int, e store.Event) error
	DeleteCustomerPasskey(ctx context.Context, system, customerRef string, id int64, e store.Event) (store.CustomerPasskey, error)
	LastCustomerLocale(ctx context.Context, system, customerRef string) (string, error)
	DeleteExpiredCustomerCeremonies(ctx context.Context, now time.Time) (int64, error)
	UseCustomerPasskey(ctx context.Context, id, signCount int64, at time.Time) (bool, error)
	StartCustomerCeremony(ctx context.Context, idHash []byte, who store.CustomerCeremony, session []byte, now, expires time.Time) error
	TakeCustomerCeremony(ctx context.Context, idHash []byte, who store.CustomerCeremony, now time.Time) ([]byte, error)
}

// Config is what the service needs besides its store.
type Config struct {
	// PublicURL is the console's address as customers reach it; the
	// relying party is derived from it. Empty: customer passkeys off.
	PublicURL string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Log receives refused answers with the library's reason, and notices
	// that could not be mailed (nil: discarded).
	Log *slog.Logger
	// Mail sends the customer the notice of a passkey added or removed,
	// to the contact on file (the system's adapter.ContactDirectory);
	// nil sends none.
	Mail mail.Sender
	// Registry names each system to its customers and finds their
	// contact on file; nil sends no notice.
	Registry *adapter.Registry
	// Limit is how many passkeys a customer may have for one system (0:
	// DefaultLimit).
	Limit int
	// Catalogue holds the notices' texts (nil: locale.Installed()); tests
	// give one with the pseudo-locale.
	Catalogue *locale.Catalogue
}

// DefaultLimit is how many passkeys a customer may have for one system
// unless Config.Limit says otherwise: enough for every device a person
// keeps, few enough that a list of them is read.
const DefaultLimit = 10

// Service registers customers' passkeys and checks their decisions.
type Service struct {
	store    Store
	rp       *webauthn.WebAuthn
	now      func() time.Time
	log      *slog.Logger
	mail     mail.Sender
	registry *adapter.Registry
	limit    int
	// catalogue holds the texts of the notices mailed to customers.
	catalogue *locale.Catalogue
	// beforeUse, when set, runs after an answer verified and before the
	// UPDATE that records its counter; tests hold racing answers there.
	beforeUse func()
}

// New builds the service; it fails on a public URL passkeys cannot use
// (an IP address, no host).
func New(st Store, cfg Config) (*Service, error) {
	s := &Service{store: st, now: cfg.Now, log: cfg.Log, mail: cfg.Mail, registry: cfg.Registry, limit: cfg.Limit, catalogue: cfg.Catalogue}
	if s.catalogue == nil {
		s.catalogue = locale.Installed()
	}
	if s.limit <= 0 {
		s.limit = DefaultLimit
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	var err error
	s.rp, err = factors.NewRelyingParty(cfg.PublicURL) // nil without a URL: passkeys off
	return s, err
}

// On reports whether customers may add and use passkeys.
func (s *Service) On() bool { return s != nil && s.rp != nil }

// Customer is a customer as a business system knows them.
type Customer struct {
	System string
	Ref    string
}

func (c Customer) normalised() Customer {
	return Customer{System: c.System, Ref: adapter.NormaliseCustomerRef(c.Ref)}
}

// Has reports whether c has a passkey for c.System.
func (s *Service) Has(ctx context.Context, c Customer) (bool, error) {
	if !s.On() {
		return false, nil
	}
	c = c.normalised()
	keys, err := s.store.CustomerPasskeysOf(ctx, c.System, c.Ref)
	return len(keys) > 0, err
}

// ErrOff answers passkey requests of a console without a relying party.
var ErrOff = &apperr.Error{Kind: apperr.NotFound, Code: "passkeys_off",
	Message: "Passkeys are not available here.", Hint: "Decide with the way this page offers instead."}

// ErrNotFromACode refuses adding a passkey from a session proven by a
// typed code (or any proof not in RegisterProofs).
var ErrNotFromACode = &apperr.Error{Kind: apperr.Forbidden, Code: "passkey_needs_stronger_proof",
	Message: "A passkey cannot be added after showing it's you with a code.",
	Hint:    "Open the request from the link in our e-mail, or sign in to your account, then add the passkey."}

// ErrRefused answers a passkey's answer that is not evidence of what it
// was asked for: another request, version or decision, another origin, no
// user verification, a ceremony taken or expired, a signature or counter
// that does not hold.
var ErrRefused = &apperr.Error{Kind: apperr.Invalid, Code: "passkey_refused",
	Message: "The passkey's answer was not accepted.",
	Hint:    "Try again from this page, or show us it's you another way.",
	Fields:  map[string]string{"passkey": "Try the passkey again from this page."}}

// ErrNoPasskey answers a decision with a passkey by a customer who has
// none for this business.
var ErrNoPasskey = &apperr.Error{Kind: apperr.NotFound, Code: "no_passkey",
	Message: "You have no passkey for this business yet.", Hint: "Show us it's you another way below."}

// waUser is a customer as the WebAuthn library sees them.
type waUser struct {
	c      Customer
	handle []byte
	creds  []webauthn.Credential
}

func (w waUser) WebAuthnID() []byte                         { return w.handle }
func (w waUser) WebAuthnName() string                       { return w.c.Ref }
func (w waUser) WebAuthnDisplayName() string                { return w.c.Ref }
func (w waUser) WebAuthnCredentials() []webauthn.Credential { return w.creds }

func (s *Service) user(ctx context.Context, c Customer) (waUser, []store.CustomerPasskey, error) {
	fresh := make([]byte, 32)
	_, _ = rand.Read(fresh)
	handle, err := s.store.CustomerWebAuthnHandle(ctx, c.System, c.Ref, fresh)
	if err != nil {
		return waUser{}, nil, err
	}
	keys, err := s.store.CustomerPasskeysOf(ctx, c.System, c.Ref)
	if err != nil {
		return waUser{}, nil, err
	}
	w := waUser{c: c, handle: handle}
	for _, k := range keys {
		transports := make([]protocol.AuthenticatorTransport, len(k.Transports))
		for i, t := range k.Transports {
			transports[i] = protocol.AuthenticatorTransport(t)
		}
		w.creds = append(w.creds, webauthn.Credential{ID: k.CredentialID, PublicKey: k.PublicKey, Transport: transports,
			AttestationFormat: k.AttestationFormat, Flags: webauthn.CredentialFlagsFromMsgpByte(byte(k.Flags)),
			Authenticator: webauthn.Authenticator{AAGUID: k.AAGUID, SignCount: uint32(k.SignCount)}})
	}
	return w, keys, nil
}

// Ceremony is a ceremony begun for the browser: ID goes into the
// browser's session (the server keeps the challenge under its hash),
// Options to navigator.credentials.
type Ceremony struct {
	ID      string
	Options json.RawMessage
}

func (s *Service) begin(ctx context.Context, who store.CustomerCeremony, options any, data *webauthn.SessionData) (Ceremony, error) {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	id := base64.RawURLEncoding.EncodeToString(raw)
	session, err := json.Marshal(data)
	if err != nil {
		return Ceremony{}, err
	}
	opts, err := json.Marshal(options)
	if err != nil {
		return Ceremony{}, err
	}
	now := s.now()
	if err := s.store.StartCustomerCeremony(ctx, hashOf(id), who, session, now, now.Add(factors.CeremonyLife)); err != nil {
		return Ceremony{}, err
	}
	return Ceremony{ID: id, Options: opts}, nil
}

// take deletes and returns the ceremony's session data; ok is false when
// there is none to take for who.
func (s *Service) take(ctx context.Context, who store.CustomerCeremony, id string) (webauthn.SessionData, bool, error) {
	var data webauthn.SessionData
	if id == "" {
		return data, false, nil
	}
	raw, err := s.store.TakeCustomerCeremony(ctx, hashOf(id), who, s.now())
	if errors.Is(err, store.ErrNotFound) {
		return data, false, nil
	}
	if err != nil {
		return data, false, err
	}
	return data, true, json.Unmarshal(raw, &data)
}

func hashOf(id string) []byte {
	h := sha256.Sum256([]byte(id))
	return h[:]
}

// mayRegister refuses a proof not in RegisterProofs.
func mayRegister(proof string) error {
	if !slices.Contains(RegisterProofs, proof) {
		return ErrNotFromACode
	}
	return nil
}

// BeginRegistration starts adding a passkey for c, who proved who they
// are with proof on request invocationID. The options exclude c's
// passkeys and ask for user verification (required: a passkey decides
// alone). A proof not in RegisterProofs — a typed code — is
// ErrNotFromACode; a customer who has the limit already, ErrTooMany.
func (s *Service) BeginRegistration(ctx context.Context, c Customer, invocationID, proof string) (Ceremony, error) {
	if !s.On() {
		return Ceremony{}, ErrOff
	}
	if err := mayRegister(proof); err != nil {
		return Ceremony{}, err
	}
	c = c.normalised()
	w, _, err := s.user(ctx, c)
	if err != nil {
		return Ceremony{}, err
	}
	if len(w.creds) >= s.limit {
		return Ceremony{}, s.errTooMany()
	}
	opts, data, err := s.rp.BeginRegistration(w,
		webauthn.WithExclusions(webauthn.Credentials(w.creds).CredentialDescriptors()),
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementPreferred, UserVerification: protocol.VerificationRequired}))
	if err != nil {
		return Ceremony{}, err
	}
	return s.begin(ctx, store.CustomerCeremony{System: c.System, CustomerRef: c.Ref, InvocationID: invocationID,
		Purpose: store.CustomerCeremonyRegister}, opts, data)
}

// Registration is where a passkey is being added: for customer C, on the
// page of request InvocationID (of task TaskID), which they proved who they
// are for with Proof.
type Registration struct {
	C            Customer
	InvocationID string
	TaskID       string
	Proof        string
	// Name is what the customer's list calls the passkey: as the
	// customer typed it, or the parts of the browser that added it
	// (BrowserName), written in the reader's language when shown
	// (DisplayName); empty is "Passkey" in that language.
	Name string
}

// FinishRegistration verifies the browser's answer to registration
// ceremony id (begun for r.C on r.InvocationID) and keeps the passkey with
// its audit event (controlplane.EventCustomerPasskeyAdded), then mails
// the customer a notice. The proof is checked again: the session may have
// changed in between. A customer who has the limit already is refused
// (ErrTooMany). The ceremony is spent whatever the answer; one that does
// not verify is ErrRefused.
func (s *Service) FinishRegistration(ctx context.Context, r Registration, id string, response []byte) error {
	if !s.On() {
		return ErrOff
	}
	if err := mayRegister(r.Proof); err != nil {
		return err
	}
	c := r.C.normalised()
	data, ok, err := s.take(ctx, store.CustomerCeremony{System: c.System, CustomerRef: c.Ref, InvocationID: r.InvocationID,
		Purpose: store.CustomerCeremonyRegister}, id)
	if err != nil {
		return err
	}
	if !ok {
		return ErrRefused
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return ErrRefused
	}
	w, _, err := s.user(ctx, c)
	if err != nil {
		return err
	}
	cred, err := s.rp.CreateCredential(w, data, parsed)
	if err != nil {
		s.refused(c, "registration", err)
		return ErrRefused
	}
	transports := make([]string, len(cred.Transport))
	for i, t := range cred.Transport {
		transports[i] = string(t)
	}
	aaguid := cred.Authenticator.AAGUID
	if aaguid == nil {
		aaguid = []byte{}
	}
	name := nameOf(r.Name)
	e, err := s.event(c, r.Proof, controlplane.EventCustomerPasskeyAdded, r.TaskID, r.InvocationID, name)
	if err != nil {
		return err
	}
	err = s.store.InsertCustomerPasskey(ctx, store.CustomerPasskey{System: c.System, CustomerRef: c.Ref, CredentialID: cred.ID,
		PublicKey: cred.PublicKey, SignCount: int64(cred.Authenticator.SignCount), Transports: transports, AAGUID: aaguid,
		Flags: int16(cred.Flags.MsgpByte()), AttestationFormat: cred.AttestationFormat, Proof: r.Proof, Name: name, CreatedAt: s.now()},
		s.limit, e)
	switch {
	case errors.Is(err, store.ErrConflict):
		return &apperr.Error{Kind: apperr.Conflict, Code: "passkey_exists", Message: "This passkey is already added.",
			Hint: "You can use it next time already."}
	case errors.Is(err, store.ErrLimit):
		return s.errTooMany()
	case err != nil:
		return err
	}
	s.notify(ctx, c, noticeAdded, name)
	return nil
}

// refused logs why an answer did not verify (the library's detail); the
// customer sees ErrRefused.
func (s *Service) refused(c Customer, ceremony string, err error) {
	s.log.Warn("customer passkey refused", "system", c.System, "ceremony", ceremony, "why", factors.RefusalDetail(err))
}
