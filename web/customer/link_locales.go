package customer

import (
	"sync"
	"time"
)

// A link's page, before its holder proved anything, speaks the language
// of the link's customer record (linkRecordLocale). Whoever holds a link
// may fetch that page as often as they like, without cookies, so the
// answer is kept here, in the process, per system and customer, rather
// than in a session: one read of the business system per customer every
// linkLocaleFor, and no session row stored for a visitor (as the sign-in
// page stores none).

const (
	// linkLocaleFor is how long a link customer's record locale is kept:
	// a change in the business system shows on their link's page after
	// this at most (a proof reads it afresh).
	linkLocaleFor = 10 * time.Minute
	// linkLocaleRetry is how long a failed read leaves the page in the
	// browser's language before the business system is asked again.
	linkLocaleRetry = time.Minute
	// linkLocaleMax bounds the kept answers; past it, those expired go,
	// then all.
	linkLocaleMax = 4096
)

// linkLocales are the kept record locales of links' customers; mu guards
// the map, and no read of a business system runs under it.
type linkLocales struct {
	now func() time.Time
	mu  sync.Mutex
	by  map[string]linkLocale
}

// linkLocale is one customer's record locale ("" for none, or for a read
// that failed) and when it stops counting.
type linkLocale struct {
	tag   string
	until time.Time
}

func newLinkLocales(now func() time.Time) *linkLocales {
	if now == nil {
		now = time.Now
	}
	return &linkLocales{now: now, by: map[string]linkLocale{}}
}

// get is the kept record locale of key's customer, if it is still kept.
func (l *linkLocales) get(key string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.by[key]
	if !ok || !l.now().Before(v.until) {
		return "", false
	}
	return v.tag, true
}

// put keeps tag for key's customer for d.
func (l *linkLocales) put(key, tag string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if len(l.by) >= linkLocaleMax {
		for k, v := range l.by {
			if !now.Before(v.until) {
				delete(l.by, k)
			}
		}
		if len(l.by) >= linkLocaleMax {
			clear(l.by)
		}
	}
	l.by[key] = linkLocale{tag: tag, until: now.Add(d)}
}
