package kit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"countersign/store"
)

type noStates struct{}

func (noStates) InvocationStateCounts(context.Context) (map[string]int64, error) { return nil, nil }

// TestTelemetryCountsAWrappedErrorByItsStatus: a request that fails is
// counted under the status its answer has, also when the error that says
// so is wrapped (an HTTP error, the store's not-found).
func TestTelemetryCountsAWrappedErrorByItsStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"wrapped HTTP error", fmt.Errorf("console: %w", echo.NewHTTPError(http.StatusMethodNotAllowed)), "405"},
		{"store's not-found", fmt.Errorf("controlplane: %w", &store.NotFoundError{What: "task"}), "404"},
		{"other error", errors.New("boom"), "500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tel := NewTelemetry(noStates{})
			e := echo.New()
			c := e.NewContext(httptest.NewRequest(http.MethodGet, "/tasks/t_1", nil), httptest.NewRecorder())
			c.SetPath("/tasks/:id")
			if err := tel.Middleware(func(echo.Context) error { return tc.err })(c); !errors.Is(err, tc.err) {
				t.Fatalf("the middleware returned %v, want %v", err, tc.err)
			}
			scrape := httptest.NewRecorder()
			tel.PrometheusHandler("").ServeHTTP(scrape, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			want := `countersign_http_requests_total{method="GET",route="/tasks/:id",status="` + tc.want + `"} 1`
			if !strings.Contains(scrape.Body.String(), want) {
				t.Errorf("the scrape has no %s; its requests:\n%s", want, requestLines(scrape.Body.String()))
			}
		})
	}
}

func requestLines(exposition string) string {
	var b strings.Builder
	for line := range strings.Lines(exposition) {
		if strings.HasPrefix(line, "countersign_http_requests_total") {
			b.WriteString(line)
		}
	}
	return b.String()
}
