// Package demo is everything `make run` shows a newcomer, in one place:
// the demo users and their credentials file, the demo assistant and its
// key, the policies staged for the demo, 40 days of history for the
// metrics, work in the approval queue, a refund whose acknowledgement was
// lost, the demo customer's pending confirmations and their links, and one
// run of the scripted assistant. It seeds through the production services'
// exported operations, as a person or an assistant would, and only in demo
// mode (the embedded database), never with a configured DATABASE_URL.
// Production packages never import it; a test walks the module to keep it
// so.
package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"

	"countersign/internal/accounts"
	"countersign/internal/adapter"
	"countersign/internal/assistants"
	"countersign/internal/confirmation"
	"countersign/internal/controlplane"
	"countersign/internal/demoshop"
	"countersign/internal/lists"
)

// Demo is one start of the console in demo mode: the credentials file and
// the demo users, known before the policies are made (the demo manager
// owns them).
type Demo struct {
	dataDir string
	path    string
	creds   Credentials
	manager controlplane.Actor
	agent   controlplane.Actor
}

// Start makes sure the demo users exist with the passwords of the
// credentials file in dataDir (generating them on first run) and notes the
// demo shop's URL (empty when no shop is connected). It fails on a
// database error or an unreadable credentials file.
func Start(ctx context.Context, acc *accounts.Service, dataDir, shopURL string) (*Demo, error) {
	d := &Demo{dataDir: dataDir, path: filepath.Join(dataDir, "demo-credentials")}
	var err error
	if d.creds, err = Load(d.path); err != nil {
		return nil, err
	}
	if err := EnsureUsers(ctx, acc, &d.creds); err != nil {
		return nil, err
	}
	d.creds.ShopURL = shopURL
	if secret, err := hex.DecodeString(d.creds.SiteSecret); err != nil || len(secret) < 32 {
		// The demo plays the shop's own site too: it vouches for its
		// customers to the demo assistant with this secret.
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		d.creds.SiteSecret = hex.EncodeToString(b)
	}
	for _, p := range People {
		id, err := acc.UserIDByEmail(ctx, p.Email)
		if err != nil {
			return nil, fmt.Errorf("demo: %s: %w", p.Email, err)
		}
		switch p.Role {
		case accounts.Manager:
			d.manager = controlplane.UserActor(id, string(p.Role), p.Name)
		case accounts.Agent:
			d.agent = controlplane.UserActor(id, string(p.Role), p.Name)
		}
	}
	return d, nil
}

// SiteSecrets are the secrets the demo's business sites sign customer
// assertions with: the demo shop's ("shop"). Nil on a nil Demo.
func (d *Demo) SiteSecrets() map[string][]byte {
	if d == nil {
		return nil
	}
	secret, _ := hex.DecodeString(d.creds.SiteSecret)
	return map[string][]byte{"shop": secret}
}

// PolicyOwner is the demo manager's user id, the owner of the policies
// made at start; nil on a nil Demo (not in demo mode), so the console can
// pass it either way.
func (d *Demo) PolicyOwner() *int64 {
	if d == nil {
		return nil
	}
	return &d.manager.UserID
}

// Services are the console's services the demo seeds through, and the
// store that loads the metrics history.
type Services struct {
	Control *controlplane.Service
	// Registry is the control plane's connected systems (the demo shop).
	Registry      *adapter.Registry
	Lists         *lists.Service
	Assistants    *assistants.Service
	Confirmations *confirmation.Service
	History       HistoryLoader
	// Shop is the demo shop started in this process, whose faults stage
	// the lost acknowledgement (nil when the shop is elsewhere: then it is
	// not staged). The shop serves no fault endpoint in demo mode.
	Shop ShopFaults
}

// ShopFaults sets and clears the demo shop's fault rules (*demoshop.Shop
// does).
type ShopFaults interface {
	SetFault(rule demoshop.FaultRule) error
	ClearFaults()
}

// Seed fills the demo with data and returns what the console prints: the
// sign-ins, the assistant's key, the shop and the customer's confirmation
// links. It keeps the credentials in the data dir for later runs. Each
// part is made once and found again on later starts. It must run before
// the dispatcher starts: the lost acknowledgement is sent by the seeding
// itself. Work for the queue and the lost acknowledgement are logged and
// skipped when they fail, so the console starts without them rather than
// not at all; every other failure is returned.
func (d *Demo) Seed(ctx context.Context, svc Services, log *slog.Logger) (Printout, error) {
	if err := seedHistory(ctx, svc.History, d.agent.UserID); err != nil {
		return Printout{}, err
	}
	if err := seedQueueWork(ctx, svc.Control, svc.Registry, svc.Lists, log); err != nil {
		log.Warn("demo work for the approval queue not seeded", "error", err)
	}
	if err := seedUnverified(ctx, svc.Control, svc.Lists, d.agent, svc.Shop); err != nil {
		log.Warn("demo refund with a lost acknowledgement not seeded", "error", err)
	}
	a, err := ensureAssistant(ctx, svc.Assistants, d.creds.Assistant)
	if err != nil {
		return Printout{}, err
	}
	d.creds.Assistant = &a
	if err := d.creds.Save(d.path); err != nil {
		return Printout{}, err
	}
	links, err := seedConfirmations(ctx, svc.Control, svc.Lists, svc.Confirmations, d.manager, People[0].Email)
	if err != nil {
		return Printout{}, err
	}
	spoken, err := seedSpeakers(ctx, svc.Control, svc.Lists, svc.Confirmations)
	if err != nil {
		return Printout{}, err
	}
	return Printout{CredentialsPath: d.path, Users: d.creds.Users, Assistant: a, ShopURL: d.creds.ShopURL, SiteSecret: d.creds.SiteSecret,
		Customer: People[0].Email, Links: links, Speakers: spoken}, nil
}
