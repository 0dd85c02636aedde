package adapter

import "fmt"

// PrincipalEmail is the principal's e-mail address in the form systems
// are matched by (NormaliseCustomerRef); a principal without one is
// invalid.
func PrincipalEmail(p Principal) (string, error) {
	email := NormaliseCustomerRef(p.CustomerRef)
	if email == "" {
		return "", Invalid(map[string]string{"customer_ref": "required: the customer's e-mail address"})
	}
	return email, nil
}

// OneAccount is the principal's account among found, the system's accounts
// whose e-mail matched email: exactly one is the answer; none, or several
// that e-mail cannot tell apart, fail with "unknown_customer" (Refused). It
// never guesses.
func OneAccount[A any](system, email string, found []A) (A, error) {
	var zero A
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return zero, &Error{Code: "unknown_customer", Outcome: Refused,
			Message: fmt.Sprintf("The customer %s has no account in %s.", email, system),
			Hint:    "This assistant can only act for the signed-in customer's own account in this system."}
	}
	return zero, &Error{Code: "unknown_customer", Outcome: Refused,
		Message: fmt.Sprintf("The e-mail %s matches several accounts in %s.", email, system),
		Hint:    "Hand this conversation to a person; the account cannot be told apart by e-mail."}
}
