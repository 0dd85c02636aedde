package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"countersign/store/pgcluster"
)

var tpsLine = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)

// Pgbench initialises pgbench's tables at scale in the database at url and
// runs the simple-update script (-N: no updates of the branch and teller
// rows, so clients do not queue on them) with clients clients for d,
// returning transactions per second.
func Pgbench(ctx context.Context, url string, scale, clients int, d time.Duration) (float64, error) {
	dir, err := pgcluster.FindBinDir()
	if err != nil {
		return 0, err
	}
	bin := filepath.Join(dir, "pgbench")
	if out, err := exec.CommandContext(ctx, bin, "-i", "-q", "-s", strconv.Itoa(scale), url).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("pgbench -i: %w\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, bin, "-N", "-c", strconv.Itoa(clients), "-j", "2",
		"-T", strconv.Itoa(max(1, int(d.Seconds()))), url).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("pgbench -N: %w\n%s", err, out)
	}
	return parseTPS(string(out))
}

func parseTPS(out string) (float64, error) {
	m := tpsLine.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("pgbench: no tps line in its output:\n%s", out)
	}
	return strconv.ParseFloat(m[1], 64)
}

// StartBareEcho serves one Echo route that answers a short text on a
// loopback port: the most an HTTP handler in this stack can do on this
// machine. It returns its URL and a stop function.
func StartBareEcho() (string, func(), error) {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(err)
		}
	}()
	return "http://" + l.Addr().String() + "/", func() { _ = srv.Close() }, nil
}

func numCPU() int { return runtime.NumCPU() }
