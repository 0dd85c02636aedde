package confirmation_test

import (
	"context"
	"testing"

	"countersign/internal/apperr"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
)

// TestProofKindAgainstTheRequestsSystem is the table of every proof on
// every system under each configuration, through MayDecide, the check
// every deciding path makes: a proof made on the very request still
// decides only where the request's system accepts its kind (an assertion
// only with the system's secret).
func TestProofKindAgainstTheRequestsSystem(t *testing.T) {
	t.Parallel()
	secret := []byte("0123456789abcdef0123456789abcdef")
	const (
		link      = confirmation.ProofLink
		code      = confirmation.ProofCode
		account   = confirmation.ProofAccount
		assertion = confirmation.ProofAssertion
		passkey   = confirmation.ProofPasskey
	)
	configs := []struct {
		name    string
		proofs  map[string][]confirmation.Proof
		secrets map[string][]byte
		// accepted lists, per system, the proofs a decision takes.
		accepted map[string][]confirmation.Proof
	}{
		// Typed codes are off unless a system turns them on.
		{"default", nil, nil,
			map[string][]confirmation.Proof{"shop": {link, account, passkey}, "shop-http": {link, account, passkey}}},
		{"shop-http=code+link", map[string][]confirmation.Proof{"*": {link, account}, "shop-http": {code, link}}, nil,
			map[string][]confirmation.Proof{"shop": {link, account, passkey}, "shop-http": {code, link}}},
		{"code+account,shop-http=assertion", map[string][]confirmation.Proof{"*": {code, account}, "shop-http": {assertion}},
			map[string][]byte{"shop-http": secret},
			map[string][]confirmation.Proof{"shop": {code, account, passkey}, "shop-http": {assertion}}},
		{"code,shop-http=assertion+passkey", map[string][]confirmation.Proof{"*": {code}, "shop-http": {assertion, passkey}},
			map[string][]byte{"shop-http": secret},
			map[string][]confirmation.Proof{"shop": {code}, "shop-http": {assertion, passkey}}},
		{"assertion without a secret", map[string][]confirmation.Proof{"*": {code}, "shop-http": {assertion}}, nil,
			map[string][]confirmation.Proof{"shop": {code}, "shop-http": {}}},
		{"account only", map[string][]confirmation.Proof{"*": {account}}, map[string][]byte{"shop": secret},
			map[string][]confirmation.Proof{"shop": {account, passkey}, "shop-http": {account, passkey}}},
		{"everything on shop", map[string][]confirmation.Proof{"*": {code}, "shop": {code, account, assertion}}, map[string][]byte{"shop": secret},
			map[string][]confirmation.Proof{"shop": {code, account, assertion, passkey}, "shop-http": {code}}},
	}
	for _, cfg := range configs {
		links := confirmation.New(nil, nil, nil, confirmation.Config{Proofs: cfg.proofs, AssertionSecrets: cfg.secrets}, nil)
		for system, accepted := range cfg.accepted {
			for _, proof := range confirmation.Proofs {
				want := false
				for _, a := range accepted {
					want = want || a == proof
				}
				p := confirmation.Proved{CustomerRef: jordan, Proof: proof}
				if proof != account {
					p.InvocationID, p.System = "inv_proved", system
				}
				err := links.MayDecide(context.Background(), p, controlplane.Invocation{ID: "inv_proved", System: system}, jordan)
				if want && err != nil {
					t.Errorf("%s: %s on %s refused: %v", cfg.name, proof, system, err)
				}
				if e, ok := apperr.As(err); !want && (!ok || e.Kind != apperr.Forbidden || e.Code != "proof_not_accepted") {
					t.Errorf("%s: %s on %s: %v, want refused as proof_not_accepted", cfg.name, proof, system, err)
				}
			}
		}
	}
}
