package sso

// ExchangeAs makes p ask the provider for codes and tokens as another
// client, while it still verifies ID tokens for its own: the tokens it gets
// are made for another audience.
func (p *Provider) ExchangeAs(id, secret string) {
	p.oauth.ClientID, p.oauth.ClientSecret = id, secret
}
