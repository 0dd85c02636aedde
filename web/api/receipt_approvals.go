package api

// receiptApprovalSchema is one staff approval a receipt carries
// (approvalJSON), with its step-up assertion.
func receiptApprovalSchema() map[string]any {
	str, b64 := typ("string"), typ("string", "unpadded base64url")
	return obj([]string{"user_id", "name", "first_of_two", "identified_by", "version", "args_hash", "at"}, map[string]any{
		"user_id":      typ("integer", "the console user's id"),
		"name":         str,
		"first_of_two": typ("boolean", "the first of two approvals a second, different person completed"),
		"identified_by": obj([]string{"method"}, map[string]any{
			"method":  typ("string", "how the person signed in: password or oidc, then +totp, +passkey or +recovery; slack for a click in Slack; unknown"),
			"issuer":  typ("string", "the OpenID provider's issuer, or the Slack workspace"),
			"subject": typ("string", "the ID token's subject, or the Slack user"),
			"step_up": obj([]string{"credential_id"}, map[string]any{"credential_id": b64})}),
		"version":   typ("integer", "the invocation's version the person approved"),
		"args_hash": typ("string", "hex SHA-256 of the approved arguments (their canonical JSON: keys sorted, no spaces)"),
		"at":        map[string]any{"type": "string", "format": "date-time"},
		"step_up": withDesc(obj([]string{"credential_id", "public_key", "rp_id", "origin", "authenticator_data", "client_data_json", "signature"},
			map[string]any{"credential_id": b64, "public_key": withDesc(b64, "COSE_Key, unpadded base64url"), "rp_id": str, "origin": str,
				"authenticator_data": b64, "client_data_json": b64, "signature": b64}),
			"the passkey assertion made for this approval: its challenge is SHA-256(\"countersign step-up v1\" ‖ len(sub) ‖ sub ‖ version ‖ len(hash) ‖ hash)"),
	})
}
