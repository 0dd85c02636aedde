package api

import (
	"strings"

	"countersign/internal/confirmation"
)

// proofWays is how a customer decides with each proof, as next.message
// tells the assistant.
var proofWays = map[confirmation.Proof]string{
	confirmation.ProofLink: "we e-mail them the whole request with a single-use link to decide, " +
		"at the address the business has on file",
	confirmation.ProofCode:      "they ask on the page for a code we e-mail them and type it there",
	confirmation.ProofAccount:   "they sign in to their account",
	confirmation.ProofAssertion: "they open it from the business's own site where they are signed in",
	confirmation.ProofPasskey:   "they use the passkey they added for this business",
}

// confirmMessage is next.message for a request awaiting its customer,
// from the proofs its system accepts (next.proofs): what the customer
// will be asked, so the assistant tells them what really happens, and
// that it must never ask them to read anything out. Without proofs (no
// confirmations configured) it says what every system does by default.
func confirmMessage(proofs []confirmation.Proof) string {
	if len(proofs) == 0 {
		proofs = confirmation.DefaultProofs
	}
	var ways []string
	code := false
	for _, p := range proofs {
		if w, ok := proofWays[p]; ok {
			ways = append(ways, w)
		}
		code = code || p == confirmation.ProofCode
	}
	msg := "Send the customer the confirmation link. It shows the request; nothing happens until the customer decides " +
		"there, after showing it's them: " + strings.Join(ways, "; or ") + ". "
	if code {
		return msg + "Never ask the customer for their code or to read anything out of a mail."
	}
	return msg + "Never ask the customer to read anything out of a mail or to paste its link into the chat."
}
