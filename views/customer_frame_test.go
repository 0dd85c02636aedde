package views

import (
	"strings"
	"testing"
)

// TestCustomerFrameNamesTheShop: a customer's page shows the shop's logo
// at a fixed size as decoration (alt="": the name follows, so a screen
// reader hears it once) and the name as text, its name in the
// title and the footer's zone; the name is text, never markup; a staff
// page keeps the console's frame.
func TestCustomerFrameNamesTheShop(t *testing.T) {
	p := Page{Title: "Refund $42.10 for your lamp", Customer: &CustomerFrame{Brand: `Harbour <b>&</b> Pine`,
		LogoURL: "/brand/shop/logo", Zone: "Europe/Paris"}}
	doc, html := renderDoc(t, MyRequestsPage(p, MyRequestsView{}))
	img := doc.Find(`header img[data-testid="brand-logo"]`)
	src, _ := img.Attr("src")
	alt, hasAlt := img.Attr("alt")
	w, _ := img.Attr("width")
	h, _ := img.Attr("height")
	if src != "/brand/shop/logo" || !hasAlt || alt != "" || w != "32" || h != "32" {
		t.Errorf("logo src %q alt %q (set %v) size %sx%s", src, alt, hasAlt, w, h)
	}
	if got := doc.Find(`header [data-testid="brand-name"]`).Text(); got != "Harbour <b>&</b> Pine" {
		t.Errorf("header name %q beside the logo", got)
	}
	if strings.Contains(html, "<b>") {
		t.Error("the shop's name reached the page as markup")
	}
	if got := doc.Find("title").Text(); got != "Refund $42.10 for your lamp · Harbour <b>&</b> Pine" {
		t.Errorf("title %q", got)
	}
	if got, _ := doc.Find(`[data-testid="time-zone"]`).Attr("data-zone"); got != "Europe/Paris" {
		t.Errorf("footer zone %q", got)
	}
	p.Customer.LogoURL = ""
	if doc, _ := renderDoc(t, MyRequestsPage(p, MyRequestsView{})); doc.Find("header img").Length() != 0 {
		t.Error("a logo without a URL")
	}
	staff, _ := renderDoc(t, MyRequestsPage(Page{Title: "Queue"}, MyRequestsView{}))
	if got := strings.TrimSpace(staff.Find("header .brand").Text()); got != "Countersign" || staff.Find(`[data-testid="customer-footer"]`).Length() != 0 {
		t.Errorf("a staff page's brand %q", got)
	}
}
