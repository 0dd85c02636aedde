package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"countersign/internal/controlplane"
	"countersign/internal/receipts"
	"countersign/internal/shopadapter"
	"countersign/store"
)

// config is every setting of the console. Each flag falls back to an
// environment variable; the README's table lists them all.
type config struct {
	Addr            string
	DatabaseURL     string
	DirectURL       string
	DataDir         string
	SessionKeys     string
	SecureCookies   bool
	TLSCertFile     string
	TLSKeyFile      string
	TrustedProxies  string
	SessionIdle     time.Duration
	SessionAbsolute time.Duration
	LogFormat       string
	ShutdownGrace   time.Duration
	ShopURL         string
	SystemsDir      string
	AdapterTimeout  time.Duration
	LeaseMargin     time.Duration
	DispatchEvery   time.Duration
	// ReconcileFirst and ShopSettleAfter time the reconciler's sweep of
	// unverified writes and what the shop's ledger proves.
	ReconcileFirst  time.Duration
	ShopSettleAfter time.Duration
	IdleInTx        time.Duration
	APIRate         int
	// MCPOrigins are the comma-separated browser origins allowed to call
	// /mcp besides -public-url's.
	MCPOrigins string
	// ShopToken is the credential the shop at ShopURL checks on every
	// call (the shop's -token), never logged.
	ShopToken string
	// TelemetryAddr serves Prometheus telemetry on an address of its own;
	// empty turns it off. TelemetryToken, when set, must come as a bearer
	// token. Their flags keep the names -metrics-addr and -metrics-token.
	TelemetryAddr  string
	TelemetryToken string
	// DebugAddr serves net/http/pprof on an address of its own (loopback
	// recommended); empty turns it off. Never on the console's address.
	DebugAddr string
	// MetricsRefresh is how often the manager's metric roll-ups fold in
	// new events.
	MetricsRefresh time.Duration
	// Notifications of the support agent's console.
	PublicURL       string
	NotifyWebhook   string
	SMTPAddr        string
	SMTPUser        string
	SMTPPassword    string
	NotifyFrom      string
	NotifyTo        string
	NotifyEvery     time.Duration
	DeadlineWarning time.Duration
	// WebhookEvery is how often outcome events are enqueued and due
	// webhook deliveries sent.
	WebhookEvery time.Duration
	// CustomerMailEvery is how often requests that started waiting for
	// their customer are looked for and mailed their quote and link.
	CustomerMailEvery time.Duration
	// WebhookAllowPrivate ("true") lets outcome webhooks be on loopback
	// and private addresses outside demo mode, as the chaos campaign's
	// receiver is. Never in production (webhooks.Config.AllowPrivate).
	WebhookAllowPrivate string
	// WebhookLegacySignature ("true") also signs outcome webhooks with
	// Countersign-Signature, for receivers written before Standard Webhooks
	// (webhooks.Config.LegacySignature).
	WebhookLegacySignature string
	// ReceiptKey is the base64 of the 32-byte Ed25519 seed receipts of
	// completed writes are signed with; empty signs with a key of the
	// process's own, which no other instance shares.
	ReceiptKey string
	// AuditKeyFile holds the note private key that signs the trail's
	// checkpoints and exports (internal/audit); AuditSignEvery is how often
	// a checkpoint is signed.
	AuditKey       string
	AuditKeyFile   string
	AuditSignEvery time.Duration
	// FactorKey is the base64 of the 32 bytes that seal staff's
	// authenticator secrets and key their recovery codes' hashes.
	FactorKey string
	// How customers prove who they are before they confirm.
	ConfirmProof     string
	AssertionSecrets string
	MailDir          string
	MailFrom         string
	// Slack: where the cards are posted and decided (cmd/countersign/slack.go).
	SlackToken   string
	SlackSecret  string
	SlackChannel string
	SlackAPIURL  string
	SlackFake    bool
	SlackEvery   time.Duration
	// Staff single sign-on through an OpenID provider (cmd/countersign/sso.go).
	// OIDCClientSecret is never logged.
	OIDCIssuer       string
	OIDCClientID     string
	OIDCClientSecret string
	OIDCScopes       string
	OIDCGroupsClaim  string
	OIDCGroupRoles   string
	OIDCName         string
	// PasswordSignIn false refuses password sign-in to staff (customers
	// are not affected).
	PasswordSignIn bool
	// OIDCDemo starts the test OpenID provider at OIDCDemoAddr in demo
	// mode and signs staff in through it (cmd/countersign/sso_demo.go).
	OIDCDemo     bool
	OIDCDemoAddr string
	// LocalesDir holds the installation's catalogue files, laid over the
	// shipped ones (cmd/countersign/locales.go).
	LocalesDir string

	// Derived by validate.
	trusted []netip.Prefix
}

// demo reports whether the console runs in demo mode: its own embedded
// PostgreSQL with seeded demo data. A configured DATABASE_URL is never demo.
func (c config) demo() bool { return c.DatabaseURL == "" }

func (c config) tls() bool { return c.TLSCertFile != "" }

// mcpOrigins are -mcp-allowed-origins as a list.
func (c config) mcpOrigins() []string {
	var out []string
	for _, o := range strings.Split(c.MCPOrigins, ",") {
		if o = strings.TrimSuffix(strings.TrimSpace(o), "/"); o != "" {
			out = append(out, o)
		}
	}
	return out
}

// allowedMCPOrigins are the browser origins that may call /mcp: the
// configured ones and -public-url's.
func (c config) allowedMCPOrigins() []string {
	out := c.mcpOrigins()
	if u, err := url.Parse(c.PublicURL); err == nil && c.PublicURL != "" && u.Host != "" {
		out = append(out, u.Scheme+"://"+u.Host)
	}
	return out
}

func parseConfig(args []string, getenv func(string) string) (config, error) {
	var c config
	fs := flag.NewFlagSet("countersign", flag.ContinueOnError)
	str := func(p *string, name, env, def, usage string) {
		if v := getenv(env); v != "" {
			def = v
		}
		fs.StringVar(p, name, def, usage+" (env "+env+")")
	}
	dur := func(p *time.Duration, name, env string, def time.Duration, usage string) {
		if v := getenv(env); v != "" {
			if d, err := time.ParseDuration(v); err == nil {
				def = d
			} else {
				def = -1 // reported by validate
			}
		}
		fs.DurationVar(p, name, def, usage+" (env "+env+")")
	}
	str(&c.Addr, "addr", "ADDR", "127.0.0.1:8080", "address the console listens on")
	str(&c.DatabaseURL, "database-url", "DATABASE_URL", "", "PostgreSQL URL; empty starts the embedded cluster in demo mode")
	str(&c.DirectURL, "database-direct-url", "DATABASE_DIRECT_URL", "",
		"with DATABASE_URL through a transaction pooler (PgBouncer): a direct URL, for LISTEN and the migration lock")
	str(&c.DataDir, "data-dir", "DATA_DIR", ".data", "folder for the embedded cluster, demo credentials and the dev session key")
	str(&c.SessionKeys, "session-keys", "SESSION_KEYS", "", "comma-separated session keys (hex, at least 32 bytes each), newest first")
	str(&c.TLSCertFile, "tls-cert", "TLS_CERT_FILE", "", "serve HTTPS with this certificate")
	str(&c.TLSKeyFile, "tls-key", "TLS_KEY_FILE", "", "private key for -tls-cert")
	str(&c.TrustedProxies, "trusted-proxies", "TRUSTED_PROXIES", "", "comma-separated CIDRs allowed to set X-Forwarded-For")
	str(&c.LogFormat, "log-format", "LOG_FORMAT", "auto", "text, json, or auto (json when stderr is not a terminal)")
	secure := getenv("SECURE_COOKIES") == "true" || getenv("SECURE_COOKIES") == "1"
	fs.BoolVar(&c.SecureCookies, "secure-cookies", secure, "mark cookies Secure and send HSTS, for a TLS-terminating proxy (env SECURE_COOKIES)")
	dur(&c.SessionIdle, "session-idle", "SESSION_IDLE_TIMEOUT", 30*time.Minute, "sign out after this long without a request")
	dur(&c.SessionAbsolute, "session-absolute", "SESSION_ABSOLUTE_TIMEOUT", 12*time.Hour, "sign out this long after sign-in whatever the activity")
	dur(&c.ShutdownGrace, "shutdown-grace", "SHUTDOWN_GRACE", 15*time.Second, "how long requests in flight may finish at shutdown")
	str(&c.ShopURL, "shop-url", "SHOP_URL", "", "demo shop to connect as system \"shop\"; empty in demo mode starts one in-process")
	str(&c.ShopToken, "shop-token", "SHOP_TOKEN", "", "the -shop-url shop's credential (its -token), sent as a bearer token on every call")
	str(&c.SystemsDir, "systems-dir", "SYSTEMS_DIR", "", "folder of *.json files, each describing one business system to connect (see internal/httpadapter/README.md)")
	str(&c.LocalesDir, "locales-dir", "LOCALES_DIR", "",
		"folder of message catalogue files (cy.json, fr.json) that add languages for customers or override shipped texts; the console does not start unless each is complete (countersign locales check DIR)")
	dur(&c.AdapterTimeout, "adapter-timeout", "ADAPTER_TIMEOUT", 15*time.Second, "longest wait for one call to a business system")
	dur(&c.LeaseMargin, "lease-margin", "DISPATCH_LEASE_MARGIN", 15*time.Second, "added to twice the adapter timeout: a dispatch not finished by then is unverified")
	dur(&c.DispatchEvery, "dispatch-interval", "DISPATCH_INTERVAL", time.Second, "how often the dispatcher looks for work besides being woken by NOTIFY")
	dur(&c.ReconcileFirst, "reconcile-first", "RECONCILE_FIRST", controlplane.DefaultConfig.ReconcileFirst,
		"how long after a write ends unverified the console first looks it up again by itself (then twice as long each time, at most 10 looks within 2h)")
	dur(&c.ShopSettleAfter, "shop-settle-after", "SHOP_SETTLE_AFTER", shopadapter.DefaultSettleAfter,
		"how long after a call to the shop no effect under its key in the shop's ledger proves it was not applied; longer than -adapter-timeout")
	dur(&c.IdleInTx, "db-idle-tx-timeout", "DB_IDLE_IN_TRANSACTION_TIMEOUT", store.DefaultIdleInTransactionTimeout, "PostgreSQL ends a console session left this long inside a transaction (a frozen console), releasing its locks")
	apiRate := 120
	if v := getenv("API_RATE_PER_MINUTE"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			apiRate = n
		} else {
			apiRate = -1 // reported by validate
		}
	}
	fs.IntVar(&c.APIRate, "api-rate", apiRate, "requests per minute each assistant API key may make (env API_RATE_PER_MINUTE)")
	str(&c.MCPOrigins, "mcp-allowed-origins", "MCP_ALLOWED_ORIGINS", "",
		"comma-separated browser origins (https://app.example.com) that may call /mcp besides -public-url's; requests without an Origin are not affected")
	str(&c.PublicURL, "public-url", "PUBLIC_URL", "", "the console's address for people, used in notification links (default http://<addr>)")
	str(&c.NotifyWebhook, "notify-webhook", "NOTIFY_WEBHOOK_URL", "", "Slack-compatible incoming webhook for approval and unverified notices")
	str(&c.SMTPAddr, "smtp-addr", "SMTP_ADDR", "", "mail server host:port for notices by e-mail")
	str(&c.SMTPUser, "smtp-user", "SMTP_USER", "", "mail server user (PLAIN auth; needs TLS unless the server is local)")
	str(&c.SMTPPassword, "smtp-password", "SMTP_PASSWORD", "", "mail server password")
	str(&c.NotifyFrom, "notify-from", "NOTIFY_FROM", "", "sender address of notice mails")
	str(&c.NotifyTo, "notify-to", "NOTIFY_TO", "", "comma-separated recipients of notice mails")
	dur(&c.NotifyEvery, "notify-interval", "NOTIFY_INTERVAL", 30*time.Second, "how often due notices are looked for")
	dur(&c.WebhookEvery, "webhook-interval", "WEBHOOK_INTERVAL", 2*time.Second, "how often invocation outcomes are enqueued and sent to assistants' webhooks")
	str(&c.ReceiptKey, "receipt-key", "RECEIPT_SIGNING_KEY", "", "base64 of the 32-byte Ed25519 seed that signs receipts of completed writes (empty: a key of this process's own)")
	str(&c.AuditKey, "audit-key", "AUDIT_SIGNING_KEY", "", "the note private key (PRIVATE+KEY+…) that signs the trail's checkpoints (prefer -audit-key-file or the environment; never logged)")
	str(&c.AuditKeyFile, "audit-key-file", "AUDIT_SIGNING_KEY_FILE", "", "file holding the note private key (PRIVATE+KEY+…, from `countersign audit keygen`) that signs the trail's checkpoints; empty: none signed, except in demo mode")
	dur(&c.AuditSignEvery, "audit-sign-interval", "AUDIT_SIGN_INTERVAL", time.Minute, "how often a checkpoint of the trail is signed (several consoles may share it)")
	str(&c.FactorKey, "factor-key", "FACTOR_KEY", "", "base64 of 32 random bytes that seal staff's authenticator secrets (empty: second factors off, except in demo mode)")
	str(&c.WebhookLegacySignature, "webhook-legacy-signature", "WEBHOOK_LEGACY_SIGNATURE", "", "true: outcome webhooks also carry the pre-Standard-Webhooks Countersign-Signature header, for receivers that verify it")
	str(&c.WebhookAllowPrivate, "webhook-allow-private", "WEBHOOK_ALLOW_PRIVATE", "", "true: outcome webhooks may be on loopback and private addresses (tests only; demo mode allows them anyway)")
	dur(&c.DeadlineWarning, "deadline-warning", "NOTIFY_DEADLINE_WARNING", 15*time.Minute, "warn this long before an approval deadline")
	str(&c.TelemetryAddr, "metrics-addr", "METRICS_ADDR", "", "serve Prometheus telemetry for operators on this host:port (not the manager's /metrics page); empty: off")
	str(&c.DebugAddr, "debug-addr", "DEBUG_ADDR", "", "serve Go's profiler (net/http/pprof) at /debug/pprof/ on this host:port, e.g. 127.0.0.1:6060; empty: off")
	str(&c.TelemetryToken, "metrics-token", "METRICS_TOKEN", "", "bearer token a Prometheus scrape of -metrics-addr must send; empty: none (bind -metrics-addr privately)")
	dur(&c.MetricsRefresh, "metrics-refresh", "METRICS_REFRESH", 30*time.Second, "how often the manager's metrics roll-ups fold in new events")
	str(&c.ConfirmProof, "confirm-proof", "CONFIRM_PROOF", "link+account",
		"how customers prove who they are before confirming: [system=]proof[+proof], proofs link, code, account, assertion, passkey (passkey on wherever account is; code only where you accept that a code can be read out)")
	str(&c.AssertionSecrets, "assertion-secrets", "CUSTOMER_ASSERTION_SECRETS", "",
		"system=<hex> secrets the business's site signs customer assertions with (at least 32 bytes each)")
	str(&c.MailDir, "mail-dir", "MAIL_DIR", "", "write customers' mails (links, codes) as files here instead of sending them (demo mode: <data-dir>/mail)")
	dur(&c.CustomerMailEvery, "customer-mail-interval", "CUSTOMER_MAIL_INTERVAL", 5*time.Second,
		"how often requests that started waiting for their customer are mailed their quote and \"Review and decide\" link (once per request version)")
	str(&c.MailFrom, "mail-from", "MAIL_FROM", "Countersign <no-reply@countersign.invalid>", "sender address of customers' mails (links, codes)")
	str(&c.SlackToken, "slack-token", "SLACK_BOT_TOKEN", "", "Slack bot token (xoxb-…) that posts the approval cards; with -slack-signing-secret and -slack-channel")
	str(&c.SlackSecret, "slack-signing-secret", "SLACK_SIGNING_SECRET", "", "the Slack app's signing secret, which signs the clicks sent to /slack/interactions")
	str(&c.SlackChannel, "slack-channel", "SLACK_CHANNEL", "", "Slack channel (ID such as C0123, or name) the approval cards are posted to")
	str(&c.SlackAPIURL, "slack-api-url", "SLACK_API_URL", "", "Slack's Web API address; empty: Slack's own")
	dur(&c.SlackEvery, "slack-interval", "SLACK_INTERVAL", 2*time.Second, "how often new cards are posted to Slack and moved ones redrawn")
	fs.BoolVar(&c.SlackFake, "slack-fake", getenv("SLACK_FAKE") == "true",
		"demo mode: start a fake Slack in-process, post the cards there and print its address (env SLACK_FAKE)")
	str(&c.OIDCIssuer, "oidc-issuer", "OIDC_ISSUER", "", "staff sign in through this OpenID provider (its issuer URL, e.g. https://login.example.com/realms/staff); empty: off")
	str(&c.OIDCClientID, "oidc-client-id", "OIDC_CLIENT_ID", "", "the console's client id at the OpenID provider")
	str(&c.OIDCClientSecret, "oidc-client-secret", "OIDC_CLIENT_SECRET", "", "the console's client secret at the OpenID provider (prefer the environment variable; never logged)")
	str(&c.OIDCScopes, "oidc-scopes", "OIDC_SCOPES", "email,profile", "scopes asked for besides openid (add the one that releases groups if the provider needs it)")
	str(&c.OIDCGroupsClaim, "oidc-groups-claim", "OIDC_GROUPS_CLAIM", "groups", "the ID token claim that lists the person's groups")
	str(&c.OIDCGroupRoles, "oidc-group-roles", "OIDC_GROUP_ROLES", "", "provider groups to console roles, e.g. support=agent,leads=manager,it=admin (the highest role wins)")
	str(&c.OIDCName, "oidc-name", "OIDC_NAME", "", "the provider's name on the sign-in button (default: the issuer's host)")
	passwords := getenv("PASSWORD_SIGN_IN") != "false" && getenv("PASSWORD_SIGN_IN") != "0"
	fs.BoolVar(&c.PasswordSignIn, "password-sign-in", passwords,
		"false: staff sign in only through the OpenID provider; customers keep their passwords (env PASSWORD_SIGN_IN)")
	c.demoSSOFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	return c, c.validate()
}

func (c *config) validate() error {
	var problems []string
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		problems = append(problems, fmt.Sprintf("-addr %q: want host:port, e.g. 127.0.0.1:8080", c.Addr))
	}
	if c.DirectURL != "" && (c.DatabaseURL == "" || !strings.HasPrefix(c.DirectURL, "postgres://") && !strings.HasPrefix(c.DirectURL, "postgresql://")) {
		problems = append(problems, "-database-direct-url: want a postgres:// URL, beside a -database-url that goes through the pooler")
	}
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		problems = append(problems, "-database-url: want a postgres:// URL")
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		problems = append(problems, "-tls-cert and -tls-key go together: set both or neither")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"-session-idle", c.SessionIdle}, {"-session-absolute", c.SessionAbsolute}, {"-shutdown-grace", c.ShutdownGrace},
		{"-adapter-timeout", c.AdapterTimeout}, {"-lease-margin", c.LeaseMargin}, {"-dispatch-interval", c.DispatchEvery}, {"-reconcile-first", c.ReconcileFirst}, {"-shop-settle-after", c.ShopSettleAfter}, {"-db-idle-tx-timeout", c.IdleInTx}, {"-metrics-refresh", c.MetricsRefresh},
		{"-webhook-interval", c.WebhookEvery}, {"-customer-mail-interval", c.CustomerMailEvery}} {
		if d.v <= 0 {
			problems = append(problems, d.name+": want a positive duration like 30m or 12h")
		}
	}
	if c.ShopSettleAfter > 0 && c.ShopSettleAfter <= c.AdapterTimeout {
		problems = append(problems, "-shop-settle-after: want longer than -adapter-timeout, or a call still on its way would be settled as not applied")
	}
	if c.NotifyEvery <= 0 || c.DeadlineWarning <= 0 {
		problems = append(problems, "-notify-interval and -deadline-warning: want positive durations like 30s or 15m")
	}
	if c.PublicURL != "" && !strings.HasPrefix(c.PublicURL, "http://") && !strings.HasPrefix(c.PublicURL, "https://") {
		problems = append(problems, "-public-url: want an http:// or https:// URL")
	}
	for _, o := range c.mcpOrigins() {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
			problems = append(problems, fmt.Sprintf("-mcp-allowed-origins %q: want an origin like https://app.example.com", o))
		}
	}
	if c.NotifyWebhook != "" && !strings.HasPrefix(c.NotifyWebhook, "https://") && !strings.HasPrefix(c.NotifyWebhook, "http://") {
		problems = append(problems, "-notify-webhook: want an https:// URL")
	}
	if c.WebhookAllowPrivate != "" && c.WebhookAllowPrivate != "true" && c.WebhookAllowPrivate != "false" {
		problems = append(problems, "-webhook-allow-private: want true or false")
	}
	if _, err := c.receipts(); err != nil {
		problems = append(problems, "-receipt-key: "+err.Error())
	}
	if _, err := c.factorKey(); c.FactorKey != "" && err != nil {
		problems = append(problems, "-factor-key: "+err.Error())
	}
	if c.WebhookLegacySignature != "" && c.WebhookLegacySignature != "true" && c.WebhookLegacySignature != "false" {
		problems = append(problems, "-webhook-legacy-signature: want true or false")
	}
	if c.SMTPAddr != "" {
		if _, _, err := net.SplitHostPort(c.SMTPAddr); err != nil {
			problems = append(problems, fmt.Sprintf("-smtp-addr %q: want host:port, e.g. mail.example.com:587", c.SMTPAddr))
		}
	}
	if len(splitList(c.NotifyTo)) > 0 && (c.SMTPAddr == "" || c.NotifyFrom == "") {
		problems = append(problems, "-notify-to needs -smtp-addr and -notify-from (notices go by mail through that server)")
	}
	if c.SessionIdle > c.SessionAbsolute {
		problems = append(problems, "-session-idle must not exceed -session-absolute")
	}
	if c.APIRate < 1 || c.APIRate > 100000 {
		problems = append(problems, "-api-rate: want a whole number of requests per minute between 1 and 100000")
	}
	if c.ShopURL != "" && !strings.HasPrefix(c.ShopURL, "http://") && !strings.HasPrefix(c.ShopURL, "https://") {
		problems = append(problems, "-shop-url: want an http:// or https:// URL")
	}
	if c.ShopURL != "" && c.ShopToken == "" {
		problems = append(problems, "-shop-token: the shop at -shop-url needs its credential: set -shop-token (SHOP_TOKEN) to the token the shop was started with")
	}
	if fi, err := os.Stat(c.SystemsDir); c.SystemsDir != "" && (err != nil || !fi.IsDir()) {
		problems = append(problems, fmt.Sprintf("-systems-dir %q: want a folder of system description files (*.json)", c.SystemsDir))
	}
	if fi, err := os.Stat(c.LocalesDir); c.LocalesDir != "" && (err != nil || !fi.IsDir()) {
		problems = append(problems, fmt.Sprintf("-locales-dir %q: want a folder of message catalogue files (<tag>.json, e.g. cy.json)", c.LocalesDir))
	}
	for _, s := range splitList(c.TrustedProxies) {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			problems = append(problems, fmt.Sprintf("-trusted-proxies %q: want CIDRs like 10.0.0.0/8", s))
			continue
		}
		c.trusted = append(c.trusted, p)
	}
	if _, err := decodeKeys(c.SessionKeys); c.SessionKeys != "" && err != nil {
		problems = append(problems, "-session-keys: "+err.Error())
	}
	if _, _, err := net.SplitHostPort(c.TelemetryAddr); c.TelemetryAddr != "" && err != nil {
		problems = append(problems, fmt.Sprintf("-metrics-addr %q: want host:port, e.g. 127.0.0.1:9090", c.TelemetryAddr))
	}
	if _, _, err := net.SplitHostPort(c.DebugAddr); c.DebugAddr != "" && err != nil {
		problems = append(problems, fmt.Sprintf("-debug-addr %q: want host:port, e.g. 127.0.0.1:6060", c.DebugAddr))
	}
	if c.DebugAddr != "" && c.DebugAddr == c.Addr {
		problems = append(problems, "-debug-addr: the profiler needs an address of its own, not the console's -addr")
	}
	if _, err := parseProofs(c.ConfirmProof); err != nil {
		problems = append(problems, "-confirm-proof "+err.Error())
	}
	if _, err := parseSecrets(c.AssertionSecrets); err != nil {
		problems = append(problems, "-assertion-secrets "+err.Error())
	}
	if strings.ContainsAny(c.MailFrom, "\r\n") {
		problems = append(problems, "-mail-from: want one address, e.g. Shop <no-reply@shop.example>")
	}
	problems = append(problems, c.validateSlack()...)
	problems = append(problems, c.validateSSO()...)
	switch c.LogFormat {
	case "auto", "text", "json":
	default:
		problems = append(problems, "-log-format: want text, json or auto")
	}
	if len(problems) > 0 {
		return errors.New("invalid configuration:\n  " + strings.Join(problems, "\n  "))
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// decodeKeys turns the configured keys into gorilla key pairs: each key
// signs with itself and encrypts with a key derived from it.
func decodeKeys(s string) ([][]byte, error) {
	var pairs [][]byte
	for i, k := range splitList(s) {
		raw, err := hex.DecodeString(k)
		if err != nil || len(raw) < 32 {
			return nil, fmt.Errorf("key %d is not at least 64 hex characters (32 bytes); make one with: openssl rand -hex 32", i+1)
		}
		enc := sha256.Sum256(append([]byte("countersign session encryption\x00"), raw...))
		pairs = append(pairs, raw, enc[:])
	}
	if len(pairs) == 0 {
		return nil, errors.New("no keys")
	}
	return pairs, nil
}

// sessionKeys returns the configured keys, or a development key generated
// once into the data dir, with a warning that it is not for production.
func (c config) sessionKeys(log *slog.Logger) ([][]byte, error) {
	if c.SessionKeys != "" {
		return decodeKeys(c.SessionKeys)
	}
	path := filepath.Join(c.DataDir, "session-key")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		raw := make([]byte, 32)
		_, _ = rand.Read(raw)
		b = []byte(hex.EncodeToString(raw))
		if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	log.Warn("no SESSION_KEYS configured: using a development key from the data dir; configure your own keys in production", "path", path)
	return decodeKeys(strings.TrimSpace(string(b)))
}

// receipts is the signer of receipts: the -receipt-key's, or a key of this
// process's own when none is given.
func (c config) receipts() (*receipts.Signer, error) {
	if c.ReceiptKey == "" {
		return receipts.Ephemeral(), nil
	}
	seed, err := base64.StdEncoding.DecodeString(c.ReceiptKey)
	if err != nil {
		return nil, errors.New("want the base64 of a 32-byte Ed25519 seed")
	}
	return receipts.NewSigner(seed)
}
