package demo

// The demo users get random passwords on first run, kept in
// <data dir>/demo-credentials so later runs print the same sign-ins.

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"

	"countersign/internal/accounts"
	"countersign/internal/apperr"
)

// Credentials is the content of the demo-credentials file: one line per
// entry, "role email password", "assistant name key", "shop url" or
// "site shop <hex>" (the secret the demo shop's site signs customer
// assertions with).
type Credentials struct {
	Users     []User
	Assistant *Assistant
	ShopURL   string
	// SiteSecret is the demo shop's site secret (hex), made on first run.
	SiteSecret string
}

// User is one demo sign-in.
type User struct {
	Role     accounts.Role
	Email    string
	Name     string
	Password string
}

// Assistant is the demo assistant's API key.
type Assistant struct {
	Name string
	Key  string
}

// People are the demo users, one per role.
var People = []User{
	{Role: accounts.Customer, Email: "customer@demo.countersign.test", Name: "Jordan Lee"},
	{Role: accounts.Agent, Email: "agent@demo.countersign.test", Name: "Sam Okafor"},
	{Role: accounts.Manager, Email: "manager@demo.countersign.test", Name: "Priya Raman"},
	{Role: accounts.Admin, Email: "admin@demo.countersign.test", Name: "Morgan Lee"},
}

// Load reads the credentials file; a missing file is an empty set.
func Load(path string) (Credentials, error) {
	var c Credentials
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("demo: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 2 && fields[0] == "shop":
			c.ShopURL = fields[1]
		case len(fields) == 3 && fields[0] == "site" && fields[1] == "shop":
			c.SiteSecret = fields[2]
		case len(fields) == 3 && fields[0] == "assistant":
			c.Assistant = &Assistant{Name: fields[1], Key: fields[2]}
		case len(fields) == 3 && accounts.Role(fields[0]).Valid():
			c.Users = append(c.Users, User{Role: accounts.Role(fields[0]), Email: fields[1], Password: fields[2]})
		}
	}
	return c, sc.Err()
}

// Save writes the file readable by its owner only.
func (c Credentials) Save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	c.Write(f)
	if err := f.Close(); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return os.Rename(tmp, path)
}

// Write prints the entries in the file's format.
func (c Credentials) Write(w io.Writer) {
	for _, u := range c.Users {
		fmt.Fprintf(w, "%s %s %s\n", u.Role, u.Email, u.Password)
	}
	if c.Assistant != nil {
		fmt.Fprintf(w, "assistant %s %s\n", c.Assistant.Name, c.Assistant.Key)
	}
	if c.ShopURL != "" {
		fmt.Fprintf(w, "shop %s\n", c.ShopURL)
	}
	if c.SiteSecret != "" {
		fmt.Fprintf(w, "site shop %s\n", c.SiteSecret)
	}
}

// EnsureUsers makes sure every demo person exists and signs in with the
// password in the file, generating passwords on first run. A user found in
// the database without a known password gets a new one.
func EnsureUsers(ctx context.Context, acc *accounts.Service, creds *Credentials) error {
	known := map[string]string{}
	for _, u := range creds.Users {
		known[u.Email] = u.Password
	}
	creds.Users = creds.Users[:0]
	for _, p := range People {
		p.Password = known[p.Email]
		if p.Password == "" {
			p.Password = password()
		}
		if err := ensureUser(ctx, acc, p); err != nil {
			return err
		}
		creds.Users = append(creds.Users, p)
	}
	return nil
}

func ensureUser(ctx context.Context, acc *accounts.Service, p User) error {
	_, err := acc.Create(ctx, accounts.NewUser{Email: p.Email, Name: p.Name, Role: p.Role, Password: p.Password})
	if err == nil {
		return nil
	}
	if e, ok := apperr.As(err); !ok || e.Kind != apperr.Invalid || e.Fields["email"] == "" {
		return fmt.Errorf("demo: create %s: %w", p.Email, err)
	}
	// Already there: make the stored password the one we will print,
	// keeping the user's sessions when it already is.
	return acc.EnsurePassword(ctx, p.Email, p.Password)
}

// password is 4 groups of 4 letters and digits: easy to type, about 79 bits.
func password() string {
	const alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
	var b strings.Builder
	for i := range 16 {
		if i > 0 && i%4 == 0 {
			b.WriteByte('-')
		}
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		b.WriteByte(alphabet[n.Int64()])
	}
	return b.String()
}
