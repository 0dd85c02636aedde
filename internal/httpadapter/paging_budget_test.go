package httpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"countersign/internal/adapter"
)

// TestAListStopsAtItsByteBudget: pages that never end (a fresh cursor
// each time) are read only until the list's bytes are spent, not to
// max_pages.
func TestAListStopsAtItsByteBudget(t *testing.T) {
	old := listBytes
	listBytes = 3000
	defer func() { listBytes = old }()
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		_, _ = fmt.Fprintf(w, `{"data":[{"id":"a","pad":%q}],"next":"c%d"}`, strings.Repeat("x", 1000), n)
	}))
	defer srv.Close()
	file := []byte(`{"name": "items", "base_url_env": "ITEMS_URL", "auth": {"type": "none"}, "idempotency_header": "Idempotency-Key",
		"objects": {"thing": {"get": "/things/{id}", "id": "/id", "display": "{object.id}"}},
		"read_tools": [{"name": "list_items", "title": "Items", "description": "Items.", "path": "/items", "items": "/data",
			"fields": ["/id"], "max_items": 100, "paging": {"next": "/next", "param": "cursor", "max_pages": 50}}],
		"actions": [{"name": "touch", "title": "Touch", "description": "Touch.", "guidance": "Touch.", "risk": "reversible",
			"params": [{"name": "thing_id", "type": "string", "required": true, "description": "the thing"}],
			"target": {"kind": "thing", "param": "thing_id"},
			"quote": {"title": "Touch {target.id}", "lines": [], "consequences": [], "confirm_label": "Touch", "decline_label": "No"},
			"request": {"method": "POST", "path": "/things/{target.id}/touch"}, "result": {"reference": "{response.id}"},
			"verify": {"path": "/things/{target.id}", "fields": {"/id": "target.id"}}}],
		"errors": {"code": "/code"}}`)
	a, err := Load("items.json", file, Config{Getenv: func(string) string { return srv.URL }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Read(context.Background(), adapter.Principal{CustomerRef: "ada@example.com"}, "list_items", json.RawMessage(`{}`))
	if err != nil || !res.Truncated || n != 3 {
		t.Errorf("list_items: truncated %v, %v after %d requests; want truncated after 3 (3000 bytes)", res.Truncated, err, n)
	}
}
