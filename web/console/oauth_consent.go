package console

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
	"countersign/internal/assistants"
	"countersign/internal/authserver"
	"countersign/internal/locale"
	"countersign/views"
	"countersign/web/kit"
)

// The consent page of the console's OAuth authorization server: a
// program asks to act through the MCP server, and a signed-in person of
// the staff says what it may act as — an assistant an admin configured,
// or themselves (their own assistant) — or no.

// actAsSelf is the choice of the person themselves.
const actAsSelf = "self"

// consentFields are the consent form's own fields; every other field is
// a parameter of the authorization request, checked again.
var consentFields = []string{"_csrf", "act_as", "decision"}

// handleOAuthAuthorize answers GET /oauth/authorize: the consent page, or
// the refusal (a page when the redirect address cannot be trusted, a
// redirect to the client otherwise).
func (h *Handler) handleOAuthAuthorize(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	p, refusal := h.checkAuthorize(c, c.QueryParams())
	if refusal != nil {
		return h.oauthRefused(c, refusal)
	}
	return h.renderConsent(c, http.StatusOK, p, u, "", nil)
}

// handleOAuthDecide answers POST /oauth/authorize: the person's answer.
// Connecting issues a code and sends the browser to the client's
// redirect URI with it; not connecting sends access_denied there.
func (h *Handler) handleOAuthDecide(c echo.Context) error {
	u, _ := kit.CurrentUser(c)
	form, err := c.FormParams()
	if err != nil {
		return refusal(apperr.BadRequest, "form_unreadable", nil)
	}
	params := url.Values{}
	for k, v := range form {
		if !slices.Contains(consentFields, k) {
			params[k] = v
		}
	}
	p, refusal := h.checkAuthorize(c, params)
	if refusal != nil {
		return h.oauthRefused(c, refusal)
	}
	iss := authserver.Issuer(h.cfg.PublicBase, c.Request())
	if form.Get("decision") != "allow" {
		return c.Redirect(http.StatusSeeOther, authserver.Deny(p, iss))
	}
	ctx := c.Request().Context()
	choice := form.Get("act_as")
	consent := authserver.Consent{Actor: actorOf(c, u)}
	switch {
	case choice == actAsSelf:
		own, err := h.cfg.Assistants.OwnAssistant(ctx, u.ID)
		if err != nil {
			return err
		}
		consent.AssistantID, consent.Assistant, consent.ActsAsUser = own.ID, own.Name, true
	case choice != "":
		configured, err := h.cfg.Assistants.Configured(ctx)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(configured, func(a assistants.Assistant) bool { return a.ID == choice })
		if i < 0 {
			return h.renderConsent(c, http.StatusUnprocessableEntity, p, u, choice,
				views.FieldErrors{"act_as": say("console.rest.consent.error.assistant_gone", nil)})
		}
		consent.AssistantID, consent.Assistant = configured[i].ID, configured[i].Name
	default:
		return h.renderConsent(c, http.StatusUnprocessableEntity, p, u, "",
			views.FieldErrors{"act_as": say("console.rest.consent.error.choose", locale.Params{"Client": p.Client.Name})})
	}
	to, err := h.cfg.AuthServer.Approve(ctx, p, consent, iss)
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, to)
}

func (h *Handler) checkAuthorize(c echo.Context, q url.Values) (authserver.Pending, *authserver.Refusal) {
	iss := authserver.Issuer(h.cfg.PublicBase, c.Request())
	return h.cfg.AuthServer.CheckAuthorize(c.Request().Context(), q, iss, authserver.Resource(iss))
}

// oauthRefused sends the browser back to the client with the error when
// its redirect URI was verified, and otherwise says why on a page of the
// console, sending nobody anywhere.
func (h *Handler) oauthRefused(c echo.Context, r *authserver.Refusal) error {
	if r.Redirect != "" {
		return c.Redirect(http.StatusSeeOther, r.Redirect)
	}
	status := http.StatusBadRequest
	if r.Err.Code == authserver.NeedsApproval || r.Err.Code == "unauthorized_client" {
		status = http.StatusForbidden
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return kit.Render(c, status, views.OAuthConsent(h.Page(c, title("connect_program", nil)), views.OAuthConsentView{Refused: r.Err.Description}))
}

// renderConsent renders the consent page of p for u, chosen checked.
func (h *Handler) renderConsent(c echo.Context, status int, p authserver.Pending, u accounts.User, chosen string, errs views.FieldErrors) error {
	configured, err := h.cfg.Assistants.Configured(c.Request().Context())
	if err != nil {
		return err
	}
	v := views.OAuthConsentView{ClientName: p.Client.Name, RedirectHost: redirectHost(p.RedirectURI), New: p.Client.New, Errors: errs}
	if p.Client.Document {
		v.KnownBy = say("console.labels.consent.known_by.document", locale.Params{"Host": redirectHost(p.Client.ID)})
	} else {
		v.KnownBy = say("console.labels.consent.known_by.registered", locale.Params{"Date": p.Client.CreatedAt.UTC().Format("2 January 2006")})
	}
	for k, vals := range p.Params {
		for _, val := range vals {
			v.Params = append(v.Params, views.OAuthParam{Name: k, Value: val})
		}
	}
	slices.SortFunc(v.Params, func(a, b views.OAuthParam) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	v.Choices = append(v.Choices, views.OAuthChoice{Value: actAsSelf, Label: say("console.labels.consent.myself", locale.Params{"Name": u.Name}),
		Checked: chosen == actAsSelf, About: say("console.labels.consent.myself_about", nil)})
	for _, a := range configured {
		v.Choices = append(v.Choices, views.OAuthChoice{Value: a.ID, Label: say("console.labels.consent.assistant", locale.Params{"Name": a.Name}),
			Checked: chosen == a.ID, About: configuredAbout(a.Grants)})
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	allowFormRedirect(c, p.RedirectURI)
	return kit.Render(c, status, views.OAuthConsent(h.Page(c, title("connect_client", locale.Params{"Client": p.Client.Name})), v))
}

// cspSource is the shape of a source allowFormRedirect adds: a scheme, or
// a scheme and a host with an optional port.
var cspSource = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:(//[A-Za-z0-9.-]+(:[0-9]+)?|//\[[0-9a-fA-F:.]+\](:[0-9]+)?)?$`)

// allowFormRedirect lets the consent form's answer be redirected to the
// client's redirect URI, verified already: browsers apply the page's
// form-action to where a form's answer redirects, and the console's is
// 'self' alone, so this page names the redirect URI's origin too.
func allowFormRedirect(c echo.Context, redirectURI string) {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return
	}
	src := u.Scheme + ":"
	if u.Host != "" {
		src = u.Scheme + "://" + u.Host
	}
	if !cspSource.MatchString(src) {
		return
	}
	h := c.Response().Header()
	h.Set("Content-Security-Policy", strings.Replace(h.Get("Content-Security-Policy"), "form-action 'self'", "form-action 'self' "+src, 1))
}

// redirectHost is the host of an address, or its scheme for a native
// app's private-use scheme.
func redirectHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if u.Host != "" {
		return u.Host
	}
	return u.Scheme + ":"
}
