package main

import (
	"fmt"
	"log/slog"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
)

// connectDescribed connects every system described by a *.json file of
// dir (none when dir is empty). An invalid file, a name already connected
// or an environment variable a file needs that is unset stops the start,
// naming the file, the line and the fix; so does an authoritative effects
// lookup whose settle_after is not longer than callTimeout, the console's
// -adapter-timeout (as -shop-settle-after must be): a call still on its
// way would be settled as not applied.
func connectDescribed(reg *adapter.Registry, dir string, ledger *adapter.Ledger, log *slog.Logger, getenv func(string) string, callTimeout time.Duration) error {
	if dir == "" {
		return nil
	}
	systems, err := httpadapter.LoadDir(dir, httpadapter.Config{Ledger: ledger, Logger: log, Getenv: getenv})
	if err != nil {
		return fmt.Errorf("-systems-dir %s: the console does not start until every description file is valid:\n%w", dir, err)
	}
	for _, s := range systems {
		if settle := s.SettleAfter(); settle > 0 && settle <= callTimeout {
			return fmt.Errorf("-systems-dir %s: system %q: /effects/settle_after %s is not longer than -adapter-timeout %s, so a call still on its way would be settled as not applied (fix: a longer settle_after, or a shorter -adapter-timeout)",
				dir, s.Name(), settle, callTimeout)
		}
		if _, err := reg.System(s.Name()); err == nil {
			return fmt.Errorf("-systems-dir %s: system %q is already connected; give the file another name", dir, s.Name())
		}
		reg.Connect(s)
		log.Info("system connected", "system", s.Name(), "described_in", dir)
	}
	return nil
}
