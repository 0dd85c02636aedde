// Package trail serves the audit trail's checkpoints and proofs
// (internal/audit) to anyone: they reveal hashes only, and an auditor or a
// witness outside the business must be able to fetch them. Signing on
// demand and exports are the admin's (web/console/audit.go).
package trail

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/internal/apperr"
	"countersign/internal/audit"
	"countersign/web/kit"
)

// Handler serves the trail's public routes.
type Handler struct {
	log *audit.Log
}

// New serves log's checkpoints and proofs; with a nil log every route
// answers that the trail is not signed here.
func New(log *audit.Log) *Handler { return &Handler{log: log} }

// Routes lists the trail's routes, each open to anyone.
func (h *Handler) Routes() []kit.Route {
	return []kit.Route{
		kit.GET("/audit/key", h.handleKey, kit.Anyone),
		kit.GET("/audit/checkpoint", h.handleLatest, kit.Anyone),
		kit.GET("/audit/checkpoints", h.handleCheckpoints, kit.Anyone),
		kit.GET("/audit/inclusion", h.handleInclusion, kit.Anyone),
		kit.GET("/audit/consistency", h.handleConsistency, kit.Anyone),
	}
}

var errOff = &apperr.Error{Kind: apperr.NotFound, Code: "trail_not_signed",
	Message: "This console signs no checkpoints of its trail.", Hint: "Set -audit-key (see internal/audit/README.md)."}

// handleKey is GET /audit/key: the verifier key auditors check with.
func (h *Handler) handleKey(c echo.Context) error {
	if h.log == nil {
		return errOff
	}
	return c.String(http.StatusOK, h.log.Keys().VerifierKey+"\n")
}

// handleLatest is GET /audit/checkpoint: the latest signed checkpoint, a
// C2SP signed note.
func (h *Handler) handleLatest(c echo.Context) error {
	if h.log == nil {
		return errOff
	}
	cp, err := h.log.Latest(c.Request().Context())
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", []byte(cp.Note))
}

// checkpointJSON is a checkpoint as the list answers it.
type checkpointJSON struct {
	Size       int64     `json:"size"`
	Root       string    `json:"root"`
	SignedAt   time.Time `json:"signed_at"`
	Checkpoint string    `json:"checkpoint"`
}

// handleCheckpoints is GET /audit/checkpoints?below=N: up to 100 signed
// checkpoints of trees smaller than N (any without it), largest first.
func (h *Handler) handleCheckpoints(c echo.Context) error {
	if h.log == nil {
		return errOff
	}
	below, err := sizeParam(c, "below", 0)
	if err != nil {
		return err
	}
	cps, err := h.log.Checkpoints(c.Request().Context(), below, 100)
	if err != nil {
		return err
	}
	out := make([]checkpointJSON, 0, len(cps))
	for _, cp := range cps {
		out = append(out, checkpointJSON{cp.Size, base64.StdEncoding.EncodeToString(cp.Root), cp.SignedAt, cp.Note})
	}
	return c.JSON(http.StatusOK, out)
}

// handleInclusion is GET /audit/inclusion?index=I&size=N: the proof that
// leaf I is in the signed tree of size N.
func (h *Handler) handleInclusion(c echo.Context) error {
	if h.log == nil {
		return errOff
	}
	index, err := sizeParam(c, "index", -1)
	if err != nil {
		return err
	}
	size, err := sizeParam(c, "size", -1)
	if err != nil {
		return err
	}
	leaf, proof, err := h.log.Inclusion(c.Request().Context(), index, size)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"index": index, "size": size,
		"leaf_hash": base64.StdEncoding.EncodeToString(leaf), "proof": encode(proof)})
}

// handleConsistency is GET /audit/consistency?from=M&to=N: the proof that
// the tree of size M is a prefix of the signed tree of size N, in the form
// `countersign audit verify -consistency` reads.
func (h *Handler) handleConsistency(c echo.Context) error {
	if h.log == nil {
		return errOff
	}
	from, err := sizeParam(c, "from", -1)
	if err != nil {
		return err
	}
	to, err := sizeParam(c, "to", -1)
	if err != nil {
		return err
	}
	proof, err := h.log.Consistency(c.Request().Context(), from, to)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, audit.Consistency{From: uint64(from), To: uint64(to), Proof: encode(proof)})
}

func encode(hashes [][]byte) []string {
	out := make([]string, len(hashes))
	for i, h := range hashes {
		out[i] = base64.StdEncoding.EncodeToString(h)
	}
	return out
}

// sizeParam reads a non-negative integer query parameter; def < 0 makes it
// required.
func sizeParam(c echo.Context, name string, def int64) (int64, error) {
	s := c.QueryParam(name)
	if s == "" && def >= 0 {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, &apperr.Error{Kind: apperr.Invalid, Message: "The query is not a tree position.",
			Fields: map[string]string{name: "a whole number, 0 or more"}}
	}
	return n, nil
}
