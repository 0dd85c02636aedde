package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"countersign/web/webtest"

	"countersign/internal/slowtest"
)

// redoclyPath is where `make test` puts the Redocly CLI (fetched from npm
// by .ci/install-deps); REDOCLY overrides it.
func redoclyPath() string {
	if p := os.Getenv("REDOCLY"); p != "" {
		return p
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", ".cache", "redocly", "node_modules", ".bin", "redocly")
}

// TestOpenAPIPassesRedoclyLint lints the OpenAPI document the console
// serves with a stock linter, Redocly's recommended rules: any error or
// warning fails. A missing CLI fails the test; only -short outside CI
// skips it.
func TestOpenAPIPassesRedoclyLint(t *testing.T) {
	slowtest.Skip(t, "runs the Redocly CLI, a Node program")
	bin := redoclyPath()
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the Redocly CLI is missing (run `make test`, which fetches it from npm): %v", err)
	}
	t.Parallel()
	b := webtest.New(t)
	res := webtest.CallAPI(t, b.Server.URL, "", http.MethodGet, "/api/v1/openapi.json", nil)
	if res.Status != http.StatusOK {
		t.Fatalf("openapi.json: %d %.200s", res.Status, res.Body)
	}
	dir := t.TempDir()
	doc := filepath.Join(dir, "openapi.json")
	if err := os.WriteFile(doc, []byte(res.Body), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "lint", "--extends", "recommended", "--format", "json", "--max-problems", "1000", doc)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "NO_COLOR=1", "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	// An error exits non-zero, a warning does not: the report says both.
	out, runErr := cmd.Output()
	var report struct {
		Totals struct {
			Errors   int `json:"errors"`
			Warnings int `json:"warnings"`
		} `json:"totals"`
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
			} `json:"location"`
		} `json:"problems"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		var stderr []byte
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("redocly lint: %v, its report is not JSON: %v\n%s\n%s", runErr, err, out, stderr)
	}
	for _, p := range report.Problems {
		where := ""
		if len(p.Location) > 0 {
			where = p.Location[0].Pointer
		}
		t.Errorf("%s %s at %s: %s", p.Severity, p.RuleID, where, p.Message)
	}
	if report.Totals.Errors+report.Totals.Warnings > 0 || runErr != nil {
		t.Errorf("redocly lint --extends recommended: %d errors, %d warnings (exit: %v)", report.Totals.Errors, report.Totals.Warnings, runErr)
	}
}
