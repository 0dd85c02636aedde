package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"countersign/internal/accounts"
	"countersign/store"
)

// createUser adds a user to the database named by DATABASE_URL, reading
// the password from stdin. It is how the first admin of a production
// installation is made.
func createUser(args []string) int {
	fs := flag.NewFlagSet("create-user", flag.ContinueOnError)
	email := fs.String("email", "", "the user's e-mail (required)")
	name := fs.String("name", "", "the user's name (required)")
	role := fs.String("role", "admin", "customer, agent, manager or admin")
	dbURL := fs.String("database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL (env DATABASE_URL)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dbURL == "" {
		fmt.Fprintln(os.Stderr, "create-user: set -database-url or DATABASE_URL")
		return 2
	}
	fmt.Fprint(os.Stderr, "Password (at least 12 characters), then Enter: ")
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(os.Stderr, "create-user: no password on stdin")
		return 2
	}
	ctx := context.Background()
	pool, err := store.Open(ctx, *dbURL, 10*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, "create-user:", err)
		return 1
	}
	defer pool.Close()
	if _, err := store.Migrate(ctx, pool); err != nil {
		fmt.Fprintln(os.Stderr, "create-user:", err)
		return 1
	}
	acc := accounts.NewService(store.New(pool), time.Now, accounts.DefaultThrottle)
	u, err := acc.Create(ctx, accounts.NewUser{Email: *email, Name: *name, Role: accounts.Role(*role),
		Password: strings.TrimRight(line, "\r\n")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "create-user:", err)
		return 1
	}
	fmt.Printf("created user %d: %s (%s)\n", u.ID, u.Email, u.Role)
	return 0
}
