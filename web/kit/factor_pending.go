package kit

import (
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/sessions"
	"github.com/labstack/echo/v4"
)

// FactorPath is the sign-in's factor step: a session whose password was
// right but whose second factor is still to come is sent there from every
// page but sign-out and static files.
const FactorPath = "/sign-in/factor"

// Keys of a session between a right password and the second factor. The
// session names no user until the factor is given (KeyUserID is unset), so
// nothing treats it as signed in.
const (
	keyPendingUser  = "factor_user"
	keyPendingBy    = "factor_by"
	keyPendingUntil = "factor_until" // Unix seconds
	keyPendingNext  = "factor_next"
)

// PendingFactor is a sign-in waiting for its second factor.
type PendingFactor struct {
	UserID int64
	// By is how the person proved who they are so far ("password").
	By string
	// Until is when the wait ends: the person signs in again afterwards.
	Until time.Time
	// Next is where the person goes once signed in.
	Next string
}

// SetPendingFactor makes sess wait for p's second factor.
func SetPendingFactor(sess *sessions.Session, p PendingFactor) {
	sess.Values[keyPendingUser] = p.UserID
	sess.Values[keyPendingBy] = p.By
	sess.Values[keyPendingUntil] = p.Until.Unix()
	sess.Values[keyPendingNext] = p.Next
	MarkDirty(sess)
}

// ClearPendingFactor ends the wait, at sign-in or sign-out.
func ClearPendingFactor(sess *sessions.Session) {
	for _, k := range []string{keyPendingUser, keyPendingBy, keyPendingUntil, keyPendingNext} {
		delete(sess.Values, k)
	}
	MarkDirty(sess)
}

// PendingFactorOf returns the request's sign-in waiting for a second
// factor, if there is one and it has not expired.
func (s *Site) PendingFactorOf(c echo.Context) (PendingFactor, bool) {
	sess := Session(c)
	if sess == nil || sess.IsNew {
		return PendingFactor{}, false
	}
	id, _ := sess.Values[keyPendingUser].(int64)
	until, _ := sess.Values[keyPendingUntil].(int64)
	if id == 0 || !s.Now().Before(time.Unix(until, 0)) {
		return PendingFactor{}, false
	}
	by, _ := sess.Values[keyPendingBy].(string)
	next, _ := sess.Values[keyPendingNext].(string)
	return PendingFactor{UserID: id, By: by, Until: time.Unix(until, 0), Next: next}, true
}

// HoldForFactor sends a session waiting for its second factor to the
// factor step from every page but that step, sign-out and static files,
// so a right password alone opens nothing.
func (s *Site) HoldForFactor(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, signedIn := CurrentUser(c); signedIn {
			return next(c)
		}
		p := c.Path()
		if p == "/sign-out" || p == FactorPath || strings.HasPrefix(p, FactorPath+"/") || strings.HasPrefix(p, "/static/") {
			return next(c)
		}
		if _, waiting := s.PendingFactorOf(c); !waiting {
			return next(c)
		}
		return c.Redirect(http.StatusSeeOther, FactorPath)
	}
}
