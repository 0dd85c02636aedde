package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Wait is one kind of thing the console's database sessions were found
// doing while a load ran: the wait (or "running"), the statement's start,
// and how many samples found a session so.
type Wait struct {
	Wait      string `json:"wait"`
	Statement string `json:"statement"`
	Samples   int    `json:"samples"`
}

// sampleWaits samples pg_stat_activity of the console's database every
// 50ms until ctx ends and returns the most frequent (wait, statement)
// pairs of active sessions, the sampler's own left out.
func (r *runner) sampleWaits(ctx context.Context) []Wait {
	counts := map[[2]string]int{}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			out := make([]Wait, 0, len(counts))
			for k, n := range counts {
				out = append(out, Wait{Wait: k[0], Statement: k[1], Samples: n})
			}
			slices.SortFunc(out, func(a, b Wait) int { return b.Samples - a.Samples })
			return out[:min(len(out), 5)]
		case <-tick.C:
		}
		rows, err := r.world.Pool().Query(context.WithoutCancel(ctx), `
			SELECT COALESCE(wait_event_type || ':' || wait_event, 'running'), left(regexp_replace(query, '\s+', ' ', 'g'), 70)
			FROM pg_stat_activity
			WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()`)
		if err != nil {
			continue
		}
		for rows.Next() {
			var k [2]string
			if rows.Scan(&k[0], &k[1]) == nil {
				counts[k]++
			}
		}
		rows.Close()
	}
}

// waitsLine is the top waits in one line for the progress log.
func waitsLine(ws []Wait) string {
	var parts []string
	for _, w := range ws[:min(len(ws), 3)] {
		parts = append(parts, fmt.Sprintf("%d× %s in %q", w.Samples, w.Wait, strings.TrimSpace(w.Statement)))
	}
	return strings.Join(parts, "; ")
}
