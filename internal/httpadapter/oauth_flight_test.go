package httpadapter_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/httpadapter"
)

// TestOAuthOneTokenFetchAtATime: when the token has expired, many reads
// and writes at once cause one request to the token endpoint: the first
// fetch is held at the endpoint until every caller has found no token and
// waits its turn, and then all of them go out with the one token fetched.
// Each write reaches the system once, with one effect.
func TestOAuthOneTokenFetchAtATime(t *testing.T) {
	t.Parallel()
	a, ps, ts, clk, err := oauthPayments(t, clientCredentials,
		map[string]string{"PAYMENTS_CLIENT_ID": "countersign", "PAYMENTS_CLIENT_SECRET": "cs-0123456789"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := readCharge(t, a); err != nil {
		t.Fatal(err)
	}
	clk.advance(11 * time.Minute) // the ten-minute token has expired

	const reads, writes = 6, 2
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	ts.mu.Lock()
	ts.hold = func() {
		first := false
		once.Do(func() { first = true })
		if first {
			close(arrived)
			<-release
		}
	}
	ts.mu.Unlock()
	waiting := make(chan struct{}, reads+writes)
	httpadapter.OnTokenWait(a, func() { waiting <- struct{}{} })

	errs := make(chan error, reads+writes)
	var wg sync.WaitGroup
	for i := range reads + writes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i < writes {
				errs <- refundOf(t, a, fmt.Sprintf("ch_%d", i+1), fmt.Sprintf("k-%d", i))
				return
			}
			errs <- readCharge(t, a)
		}()
	}
	<-arrived
	for range reads + writes {
		<-waiting
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if grants, refused := ts.counts(); grants != 2 || refused != 0 {
		t.Errorf("%d token requests and %d refusals after the token expired under %d callers, want one more request and none refused", grants-1, refused, reads+writes)
	}
	for i := range writes {
		key := fmt.Sprintf("k-%d", i)
		if n, e := ps.sends(key), ps.effects(key); n != 1 || e != 1 {
			t.Errorf("%s reached the system %d times with %d effects, want once, one", key, n, e)
		}
	}
}

// refundOf dry-runs and executes a refund of 100 cents of charge under key.
func refundOf(t *testing.T, a *httpadapter.Adapter, charge, key string) error {
	args := raw(t, map[string]any{"charge_id": charge, "amount_cents": 100, "reason": "requested_by_customer"})
	q, err := a.DryRun(context.Background(), ada, "refund_charge", args)
	if err != nil {
		return err
	}
	_, err = a.Execute(context.Background(), ada, adapter.Call{Action: "refund_charge", Args: args, IdempotencyKey: key, Quote: q})
	return err
}
