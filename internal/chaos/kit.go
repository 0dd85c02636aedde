package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"countersign/store/pgcluster"
)

// This file lends the campaign's installation to other tools (cmd/bench):
// the same cluster, console processes, shop, people and assistant, without
// the faults.

// StartDirectEnv starts a durable cluster like StartEnv but without the
// loopback proxy: URL names the server itself. It is for measuring, where
// a proxy in between would be measured too; RestartPostgres is not for it.
func StartDirectEnv(ctx context.Context, log *slog.Logger) (*Env, error) {
	dir, err := os.MkdirTemp("", "countersign-bench-pg-")
	if err != nil {
		return nil, err
	}
	e := &Env{dir: dir, log: log}
	e.cluster, err = pgcluster.Start(ctx, pgcluster.Config{DataDir: dir, Durable: true, Logger: log})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return e, nil
}

// WorldOptions change what NewWorld starts.
type WorldOptions struct {
	// Instances is the number of console processes (at least 1).
	Instances int
	// Env is added to the console processes' environment, after the
	// campaign's (a later KEY=value wins).
	Env []string
	// WrapShop, when set, wraps the shop's HTTP handler (e.g. to note when
	// each write arrives).
	WrapShop func(http.Handler) http.Handler
}

// World is one installation as a round uses it: a console database and a
// shop database, the shop served in this process, console processes, the
// admin, manager, agent and customer accounts (password Password), the
// assistant and its key, and the policies staged as in a round: product
// descriptions automatic (stage 5), cancellations approved by an agent
// (stage 3), shipping addresses confirmed by the customer (stage 4). It
// has neither the warehouse nor the webhook receiver of a round's wider
// workload, nor its refunds and reversals.
type World struct{ w *world }

// Password is every World account's password.
const Password = password

// The actions a World has staged.
const (
	ActionAuto    = actionAuto
	ActionApprove = actionApprove
	ActionConfirm = actionConfirm
)

// NewWorld sets up a World in env with the console binary bin.
func NewWorld(ctx context.Context, env *Env, bin string, opt WorldOptions) (*World, error) {
	w, err := newWorldWith(ctx, env, bin, max(1, opt.Instances), worldOptions{extraEnv: opt.Env, wrapShop: opt.WrapShop})
	if err != nil {
		return nil, err
	}
	return &World{w: w}, nil
}

// Close stops the consoles and the shop and drops both databases.
func (w *World) Close() { w.w.close() }

// ConsoleURL is the n-th console's base URL (from 0).
func (w *World) ConsoleURL(n int) string { return w.w.console(n).URL() }

// ConsolePID is the n-th console's process id, 0 when it is not running.
func (w *World) ConsolePID(n int) int {
	c := w.w.console(n)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil || c.cmd.Process == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// ConsoleLog is the end of the n-th console's output, for error messages.
func (w *World) ConsoleLog(n int) string {
	c := w.w.console(n)
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.logs.String()
	if len(s) > 3000 {
		s = s[len(s)-3000:]
	}
	return s
}

// DatabaseName is the console database's name.
func (w *World) DatabaseName() string { return w.w.dbName }

// Pool is the console's database; ShopPool the shop's.
func (w *World) Pool() *pgxpool.Pool     { return w.w.pool }
func (w *World) ShopPool() *pgxpool.Pool { return w.w.shopPool }

// APIKey is the assistant's bearer key.
func (w *World) APIKey() string { return w.w.apiKey }

// Agent, Manager and Operator are e-mails: the support agent, the manager,
// and the customer of automatic (stage 5) work.
func (w *World) Agent() string    { return w.w.agent }
func (w *World) Manager() string  { return "manager@chaos.test" }
func (w *World) Operator() string { return w.w.operator }

// Customers are the e-mails of the customers with a console account.
func (w *World) Customers() []string { return w.w.customers }

// NewProduct and NewOrder make a fresh target in the shop.
func (w *World) NewProduct(ctx context.Context) (string, error) { return w.w.newProduct(ctx) }
func (w *World) NewOrder(ctx context.Context, customer string) (string, error) {
	return w.w.newOrder(ctx, customer)
}

// Assistant is the assistant's side of the JSON API.
type Assistant struct{ a *apiClient }

// NewAssistant returns a client of the API with key.
func NewAssistant(key string) *Assistant { return &Assistant{a: newAPIClient(key)} }

// Invocation and Task are the API answers' fields the tools read.
type (
	Invocation = apiInvocation
	Task       = apiTask
)

// Do sends one request under /api/v1 of base and decodes a 2xx answer into
// out; it returns the status (0 when no answer came) and an error for
// anything but 2xx.
func (a *Assistant) Do(ctx context.Context, base, method, path string, body any, idemKey string, out any) (int, error) {
	return a.a.do(ctx, base, method, path, body, idemKey, out)
}

// Person is someone signed in to the console's pages with a cookie jar.
type Person struct{ c *webClient }

// NewPerson returns a person who signs in as email with Password.
func NewPerson(email string) *Person { return &Person{c: newWebClient(email)} }

// SignIn signs in on base.
func (p *Person) SignIn(ctx context.Context, base string) error { return p.c.signIn(ctx, base) }

// Get fetches a page (redirects are not followed): status and body.
func (p *Person) Get(ctx context.Context, base, path string) (int, string, error) {
	return p.c.get(ctx, base, path)
}

// Post sends a form: status and Location.
func (p *Person) Post(ctx context.Context, base, path string, form url.Values) (int, string, error) {
	return p.c.post(ctx, base, path, form)
}

// Cookie is the Cookie header the person's browser would send to base.
func (p *Person) Cookie(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	var h http.Header = http.Header{}
	req := &http.Request{Header: h}
	for _, c := range p.c.http.Jar.Cookies(u) {
		req.AddCookie(c)
	}
	if h.Get("Cookie") == "" {
		return "", fmt.Errorf("chaos: %s has no cookie for %s", p.c.email, base)
	}
	return h.Get("Cookie"), nil
}

// Field is the value of the hidden input name in page.
func Field(page, name string) string { return field(page, name) }

// WaitUp waits until every console answers /readyz.
func (w *World) WaitUp(ctx context.Context, within time.Duration) error {
	for _, c := range w.w.consoles {
		if err := c.waitUp(ctx, within); err != nil {
			return err
		}
	}
	return nil
}
