package httpadapter

import (
	"strings"

	"countersign/internal/adapter"
	"countersign/internal/locale"
)

var _ adapter.Branded = (*Adapter)(nil)

// Brand is how the system is named to its customers: the file's
// customer_brand, or its title (else its name) in UTC. Its Locale is
// customer_brand.locale, the system's default language, when the file
// names one.
func (a *Adapter) Brand() adapter.Brand { return a.brand }

// customerBrand checks the file's customer_brand, which the schema cannot
// check: the name holds no invisible
// character, the logo is an https:// URL with a host, the zone is an IANA
// name. The locale was read and checked before (fileLocale), since every
// quote text is compiled against it.
func (c *compiler) customerBrand(a *Adapter, d *Description) {
	a.brand = adapter.Brand{Name: d.Title}
	if a.brand.Name == "" {
		a.brand.Name = d.Name
	}
	if b := d.CustomerBrand; b != nil {
		if err := adapter.CheckBrandName(b.Name); err != nil {
			c.fail("/customer_brand/name", err.Error(), "write the business's name as its customers know it, e.g. \"Harbour & Pine\"")
		}
		a.brand.Name = b.Name
		if b.LogoURL != "" {
			if err := adapter.CheckLogoURL(b.LogoURL); err != nil {
				c.fail("/customer_brand/logo_url", err.Error(), "use an https:// address of the logo image, or leave logo_url out")
			}
			a.brand.LogoURL = b.LogoURL
		}
		zone, err := adapter.LoadZone(b.TimeZone)
		if err != nil {
			c.fail("/customer_brand/time_zone", err.Error(), "use an IANA time zone name such as \"Europe/Paris\" or \"America/New_York\", or leave time_zone out for UTC")
		}
		a.brand.Zone = zone
		if b.Locale != "" {
			a.brand.Locale = c.defaultLocale
		}
	}
}

// supportedList names the languages customers' pages ship in, for the fix
// of a locale that is not one: "en, fr, de, es, ar".
func supportedList() string {
	tags := make([]string, 0, len(locale.Supported()))
	for _, t := range locale.Supported() {
		tags = append(tags, t.String())
	}
	return strings.Join(tags, ", ")
}
