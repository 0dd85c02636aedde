package chaos

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"countersign/internal/webhooks"
)

// webhookInterval is the consoles' WEBHOOK_INTERVAL: how often they
// enqueue outcome events and send due deliveries.
const webhookInterval = 500 * time.Millisecond

// webhookSettle bounds how long the round waits, at its end, for the
// receiver to have taken every outcome event the journal has.
const webhookSettle = 20 * time.Second

// receiver is the assistant's outcome endpoint: a local HTTP server that,
// while the load runs, answers some deliveries 500, some slowly and a few
// past the consoles' 10 s delivery timeout (the receiver has the event, the
// console does not know it), so deliveries are retried. It keeps, per
// event, the delivery ids it was sent under and whether it took it (2xx).
type receiver struct {
	srv *http.Server
	url string
	// calm stops the misbehaviour (the round's end).
	calm   atomic.Bool
	mu     sync.Mutex
	secret string // the endpoint's signing secret, set once registered
	rnd    *rand.Rand
	got    []received
}

// setSecret records the signing secret the endpoint was registered with.
func (r *receiver) setSecret(s string) {
	r.mu.Lock()
	r.secret = s
	r.mu.Unlock()
}

// received is one request the receiver answered.
type received struct {
	Delivery string `json:"delivery"`
	EventID  int64  `json:"event_id"`
	Event    string `json:"event"`
	Status   int    `json:"status"`
	// BadSignature is set when the Standard Webhooks signature did not verify.
	BadSignature bool `json:"bad_signature,omitempty"`
}

// The receiver's misbehaviour, per request while the load runs.
const (
	hook500Rate     = 0.05  // answered 500
	hookSlowRate    = 0.03  // answered after 100–800 ms
	hookTimeoutRate = 0.003 // answered after the consoles' delivery timeout
)

func startReceiver(seed uint64) (*receiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{url: "http://" + l.Addr().String() + "/outcomes", rnd: rand.New(rand.NewPCG(seed, 23))}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		return
	}
	var p webhooks.Payload
	_ = json.Unmarshal(body, &p)
	rec := received{Delivery: req.Header.Get(webhooks.DeliveryHeader), EventID: p.EventID, Event: p.Event, Status: http.StatusOK}
	r.mu.Lock()
	secret := r.secret
	r.mu.Unlock()
	rec.BadSignature = webhooks.VerifyStandard(secret, req.Header, body, time.Now(), 5*time.Minute) != nil
	var wait time.Duration
	if !r.calm.Load() {
		r.mu.Lock()
		switch x := r.rnd.Float64(); {
		case x < hook500Rate:
			rec.Status = http.StatusInternalServerError
		case x < hook500Rate+hookSlowRate:
			wait = time.Duration(100+r.rnd.IntN(700)) * time.Millisecond
		case x < hook500Rate+hookSlowRate+hookTimeoutRate:
			// Past the console's 10 s: the receiver has the event, the
			// console gives up on the answer and sends it again later.
			wait = 10500 * time.Millisecond
		}
		r.mu.Unlock()
	}
	if wait > 0 {
		time.Sleep(wait)
	}
	r.mu.Lock()
	r.got = append(r.got, rec)
	r.mu.Unlock()
	w.WriteHeader(rec.Status)
}

// received returns what the receiver answered so far.
func (r *receiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

func (r *receiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}
