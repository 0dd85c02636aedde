package adapter

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"
	// The customer's pages show times in a system's zone or the customer's
	// own; the zone database travels with the binary, so a host without
	// /usr/share/zoneinfo shows the same times.
	_ "time/tzdata"
	"unicode"
)

// Brand is how a system is named to its customers on their pages and in
// their mail: the business they bought from, never the console. A customer
// who gets a code from a sender they do not know has reason to think it
// phishing, so the pages and mail say "<Name> via Countersign".
type Brand struct {
	// Name is the business as its customers know it: "Northwind Home".
	Name string
	// LogoURL, optional, is an https:// image the pages show at a fixed
	// size with the name as its alternative text.
	LogoURL string
	// Zone is the business's time zone, in which customer pages show times
	// until the customer's own zone is known; nil is UTC.
	Zone *time.Location
	// Locale, optional, is the language the business writes to customers
	// by default (a BCP 47 tag; customer_brand.locale in a description
	// file): the last step before English when nothing else decides.
	Locale string
}

// Branded is implemented by a system that names itself to customers. A
// system that does not is shown by its name in the installation.
type Branded interface {
	Brand() Brand
}

// BrandOf is s's brand, with the defaults filled in: the system's name
// for a missing Name, UTC for a missing Zone.
func BrandOf(s System) Brand {
	var b Brand
	if br, ok := s.(Branded); ok {
		b = br.Brand()
	}
	if strings.TrimSpace(b.Name) == "" {
		b.Name = s.Name()
	}
	if b.Zone == nil {
		b.Zone = time.UTC
	}
	return b
}

// CheckBrandName refuses a name a customer could be misled by: empty,
// longer than 80 characters, or holding control or invisible characters.
func CheckBrandName(name string) error {
	if strings.TrimSpace(name) == "" {
		return fmt.Errorf("the name is empty")
	}
	if len([]rune(name)) > 80 {
		return fmt.Errorf("the name is longer than 80 characters")
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.In(r, unicode.Cf) {
			return fmt.Errorf("the name holds the invisible character U+%04X", r)
		}
	}
	return nil
}

// CheckLogoURL refuses a logo that is not an absolute https:// URL with a
// host: a page served over https must not load an image over http, and a
// data: or javascript: URL is not an image of the business.
func CheckLogoURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return fmt.Errorf("%q is not an https:// URL with a host", raw)
	}
	return nil
}

// LoadZone is the time zone named by an IANA name ("Europe/Paris"); the
// empty name is UTC. Zones are loaded once and kept (every customer page
// and its polls read one from the browser's cookie): only names that
// load are kept, so the cache holds at most the zone database's few
// hundred zones whatever names are sent.
func LoadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	if name == "Local" {
		return nil, fmt.Errorf("%q is not an IANA time zone name such as \"Europe/Paris\"", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%q is not an IANA time zone name such as \"Europe/Paris\"", name)
	}
	got, _ := zones.LoadOrStore(name, loc)
	return got.(*time.Location), nil
}

// zones holds the zones LoadZone loaded, by name.
var zones sync.Map
