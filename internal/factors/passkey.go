package factors

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/controlplane"
	"countersign/store"
)

// CeremonyLife is how long a WebAuthn ceremony waits for the browser's
// answer; its options tell the browser the same.
const CeremonyLife = 5 * time.Minute

// maxPasskeyName is the longest name a person may give a passkey.
const maxPasskeyName = 60

// RelyingParty derives the WebAuthn relying party from the console's public
// URL: the RP ID is its host (without the port) and the only origin
// accepted is the URL's scheme and host. A host that is an IP address
// cannot be an RP ID (browsers refuse it), nor can an empty one.
func RelyingParty(publicURL string) (rpID, origin string, err error) {
	u, err := url.Parse(publicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "", "", fmt.Errorf("passkeys need the console's address as people reach it, e.g. https://console.example.com (got %q)", publicURL)
	}
	if _, err := netip.ParseAddr(u.Hostname()); err == nil {
		return "", "", fmt.Errorf("passkeys need a host name, not the IP address %s: browsers refuse an address as the relying party (http://localhost works on this machine)", u.Hostname())
	}
	return strings.ToLower(u.Hostname()), u.Scheme + "://" + strings.ToLower(u.Host), nil
}

// NewRelyingParty builds the WebAuthn relying party for publicURL, or nil
// (passkeys off) for an empty one: staff passkeys and customers'
// (internal/custkeys) use the same one.
func NewRelyingParty(publicURL string) (*webauthn.WebAuthn, error) {
	if publicURL == "" {
		return nil, nil
	}
	rpID, origin, err := RelyingParty(publicURL)
	if err != nil {
		return nil, err
	}
	return webauthn.New(&webauthn.Config{RPID: rpID, RPDisplayName: "Countersign", RPOrigins: []string{origin},
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Enforce: true, Timeout: CeremonyLife, TimeoutUVD: CeremonyLife},
			Registration: webauthn.TimeoutConfig{Enforce: true, Timeout: CeremonyLife, TimeoutUVD: CeremonyLife}}})
}

// PasskeysOn reports whether people may register and use passkeys (the
// console has a public URL the relying party is derived from).
func (s *Service) PasskeysOn() bool { return s.rp != nil }

// Passkeys lists userID's passkeys, oldest first.
func (s *Service) Passkeys(ctx context.Context, userID int64) ([]store.Passkey, error) {
	return s.store.PasskeysOf(ctx, userID)
}

// errPasskeysOff answers passkey requests of a console without a relying
// party.
var errPasskeysOff = &apperr.Error{Kind: apperr.NotFound, Code: "passkeys_off",
	Message: "Passkeys are not set up on this console.", Hint: "An admin sets -public-url to the console's address."}

// ErrPasskeyRefused answers a passkey's answer that does not verify:
// another origin, another challenge, a ceremony taken or expired, a
// signature that does not match, a counter that went back.
var ErrPasskeyRefused = &apperr.Error{Kind: apperr.Invalid, Code: "passkey_refused",
	Message: "The passkey's answer was not accepted.",
	Hint:    "Try again from this page; if it keeps failing, use your authenticator app's code or a recovery code.",
	Fields:  map[string]string{"passkey": "Try the passkey again from this page."}}

// waUser is a person as the WebAuthn library sees them.
type waUser struct {
	u      accounts.User
	handle []byte
	creds  []webauthn.Credential
}

func (w waUser) WebAuthnID() []byte                         { return w.handle }
func (w waUser) WebAuthnName() string                       { return w.u.Email }
func (w waUser) WebAuthnDisplayName() string                { return w.u.Name }
func (w waUser) WebAuthnCredentials() []webauthn.Credential { return w.creds }

// webauthnUser loads u's handle (made on first need) and passkeys.
func (s *Service) webauthnUser(ctx context.Context, u accounts.User) (waUser, []store.Passkey, error) {
	fresh := make([]byte, 32)
	_, _ = rand.Read(fresh)
	handle, err := s.store.WebAuthnHandle(ctx, u.ID, fresh)
	if err != nil {
		return waUser{}, nil, err
	}
	keys, err := s.store.PasskeysOf(ctx, u.ID)
	if err != nil {
		return waUser{}, nil, err
	}
	w := waUser{u: u, handle: handle}
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

// Ceremony is a WebAuthn ceremony begun for the browser: ID goes into the
// person's console session (the server keeps the challenge under its
// hash), Options to navigator.credentials.
type Ceremony struct {
	ID      string
	Options json.RawMessage
}

// begin keeps a ceremony's session data for five minutes.
func (s *Service) begin(ctx context.Context, userID int64, purpose string, options any, data *webauthn.SessionData) (Ceremony, error) {
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
	if err := s.store.StartCeremony(ctx, ceremonyHash(id), userID, purpose, session, now, now.Add(CeremonyLife)); err != nil {
		return Ceremony{}, err
	}
	return Ceremony{ID: id, Options: opts}, nil
}

// take deletes and returns the ceremony's session data; ok is false when
// there is none to take.
func (s *Service) take(ctx context.Context, userID int64, purpose, id string) (webauthn.SessionData, bool, error) {
	var data webauthn.SessionData
	raw, err := s.store.TakeCeremony(ctx, ceremonyHash(id), userID, purpose, s.now())
	if errors.Is(err, store.ErrNotFound) || id == "" {
		return data, false, nil
	}
	if err != nil {
		return data, false, err
	}
	return data, true, json.Unmarshal(raw, &data)
}

func ceremonyHash(id string) []byte {
	h := sha256.Sum256([]byte(id))
	return h[:]
}

// BeginPasskeyRegistration starts adding a passkey to u's account: the
// options exclude the passkeys u has, so one authenticator is not added
// twice.
func (s *Service) BeginPasskeyRegistration(ctx context.Context, u accounts.User) (Ceremony, error) {
	if s.rp == nil {
		return Ceremony{}, errPasskeysOff
	}
	w, _, err := s.webauthnUser(ctx, u)
	if err != nil {
		return Ceremony{}, err
	}
	opts, data, err := s.rp.BeginRegistration(w,
		webauthn.WithExclusions(webauthn.Credentials(w.creds).CredentialDescriptors()),
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementPreferred),
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{
			ResidentKey: protocol.ResidentKeyRequirementPreferred, UserVerification: protocol.VerificationPreferred}))
	if err != nil {
		return Ceremony{}, err
	}
	return s.begin(ctx, u.ID, store.CeremonyRegister, opts, data)
}

// FinishPasskeyRegistration verifies the browser's answer to ceremony id
// (the challenge, this console's origin and RP ID, the attestation) and
// keeps the new passkey under name, recording
// controlplane.EventFactorAdded by u, identified as how. A person who has
// no recovery codes gets them now, returned once, so losing every passkey
// does not need an admin. The ceremony is spent whatever the answer. A
// bad name is apperr.Invalid on "name"; an answer that does not verify is
// ErrPasskeyRefused.
func (s *Service) FinishPasskeyRegistration(ctx context.Context, u accounts.User, how controlplane.Identification, id, name string, response []byte) ([]string, error) {
	if s.rp == nil {
		return nil, errPasskeysOff
	}
	name = strings.TrimSpace(name)
	data, ok, err := s.take(ctx, u.ID, store.CeremonyRegister, id)
	if err != nil {
		return nil, err
	}
	if name == "" || len([]rune(name)) > maxPasskeyName {
		return nil, apperr.InvalidFields(map[string]string{"name": fmt.Sprintf(
			"Give the passkey a name of up to %d characters, such as the device it lives on.", maxPasskeyName)})
	}
	if !ok {
		return nil, ErrPasskeyRefused
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(response)
	if err != nil {
		return nil, ErrPasskeyRefused
	}
	w, _, err := s.webauthnUser(ctx, u)
	if err != nil {
		return nil, err
	}
	cred, err := s.rp.CreateCredential(w, data, parsed)
	if err != nil {
		s.refused(u, "registration", err)
		return nil, ErrPasskeyRefused
	}
	if err := s.insertPasskey(ctx, u, how, name, cred); err != nil {
		return nil, err
	}
	if left, err := s.store.RecoveryCodesLeft(ctx, u.ID); err != nil || left > 0 {
		return nil, err
	}
	return s.replaceRecoveryCodes(ctx, u.ID, nil)
}

// insertPasskey keeps u's new credential under name with its audit event.
func (s *Service) insertPasskey(ctx context.Context, u accounts.User, how controlplane.Identification, name string, cred *webauthn.Credential) error {
	transports := make([]string, len(cred.Transport))
	for i, t := range cred.Transport {
		transports[i] = string(t)
	}
	aaguid := cred.Authenticator.AAGUID
	if aaguid == nil {
		aaguid = []byte{}
	}
	e, err := s.factorEvent(u, how, controlplane.EventFactorAdded, KindPasskey, name)
	if err != nil {
		return err
	}
	err = s.store.InsertPasskey(ctx, store.Passkey{UserID: u.ID, Name: name, CredentialID: cred.ID, PublicKey: cred.PublicKey,
		SignCount: int64(cred.Authenticator.SignCount), Transports: transports, AAGUID: aaguid,
		Flags: int16(cred.Flags.MsgpByte()), AttestationFormat: cred.AttestationFormat, CreatedAt: s.now()}, e)
	if errors.Is(err, store.ErrConflict) {
		return &apperr.Error{Kind: apperr.Conflict, Code: "passkey_exists", Message: "This passkey is already registered.",
			Hint: "It signs you in already; to add another device, use that device."}
	}
	return err
}

// BeginPasskeySignIn starts the passkey step of u's sign-in, allowing any
// of u's passkeys; apperr.NotFound when u has none.
func (s *Service) BeginPasskeySignIn(ctx context.Context, u accounts.User) (Ceremony, error) {
	if s.rp == nil {
		return Ceremony{}, errPasskeysOff
	}
	w, _, err := s.webauthnUser(ctx, u)
	if err != nil {
		return Ceremony{}, err
	}
	if len(w.creds) == 0 {
		return Ceremony{}, apperr.New(apperr.NotFound, "You have no passkey on this console; use your code.")
	}
	opts, data, err := s.rp.BeginLogin(w, webauthn.WithUserVerification(protocol.VerificationPreferred))
	if err != nil {
		return Ceremony{}, err
	}
	return s.begin(ctx, u.ID, store.CeremonySignIn, opts, data)
}

// FinishPasskeySignIn verifies the browser's assertion for ceremony id:
// the challenge, the origin and RP ID, the signature by one of u's
// passkeys, and a signature counter above the last one seen (a counter
// that went back is refused: the authenticator may be cloned). The
// ceremony is spent whatever the answer; a right answer completes the
// sign-in in the password throttle. Anything refused is ErrPasskeyRefused.
func (s *Service) FinishPasskeySignIn(ctx context.Context, u accounts.User, id string, response []byte, ip string) error {
	if s.rp == nil {
		return errPasskeysOff
	}
	data, ok, err := s.take(ctx, u.ID, store.CeremonySignIn, id)
	if err != nil {
		return err
	}
	if !ok {
		return ErrPasskeyRefused
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return ErrPasskeyRefused
	}
	w, keys, err := s.webauthnUser(ctx, u)
	if err != nil {
		return err
	}
	cred, err := s.rp.ValidateLogin(w, data, parsed)
	if err != nil {
		s.refused(u, "sign-in", err)
		return ErrPasskeyRefused
	}
	if cred.Authenticator.CloneWarning {
		s.refused(u, "sign-in", errors.New("the signature counter did not grow"))
		return ErrPasskeyRefused
	}
	var factorID int64
	for _, k := range keys {
		if string(k.CredentialID) == string(cred.ID) {
			factorID = k.FactorID
		}
	}
	if s.beforeUse != nil {
		s.beforeUse()
	}
	used, err := s.store.UsePasskey(ctx, factorID, int64(cred.Authenticator.SignCount), s.now())
	if err != nil {
		return err
	}
	if !used {
		return ErrPasskeyRefused
	}
	return s.throttle.CompleteSignIn(ctx, u, ip)
}

// refused logs why an answer did not verify (the library's detail), for
// the person's admin; the person sees ErrPasskeyRefused.
func (s *Service) refused(u accounts.User, ceremony string, err error) {
	s.log.Warn("passkey refused", "user_id", u.ID, "ceremony", ceremony, "why", RefusalDetail(err))
}

// RefusalDetail is why the WebAuthn library refused an answer, in its
// own words (details and developer information), for a log line.
func RefusalDetail(err error) string {
	var pe *protocol.Error
	detail := err.Error()
	if errors.As(err, &pe) {
		detail = pe.Details + " " + pe.DevInfo
	}
	return strings.TrimSpace(detail)
}
