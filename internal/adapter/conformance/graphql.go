package conformance

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// isRead says whether r only reads: a GET or HEAD, or a GraphQL query (a
// POST of {"query": …} whose every operation is a query, which GraphQL
// defines as changing nothing). Everything else may write, and is what the
// suite's transport and the fault proxy fail. A body it cannot read as
// GraphQL is taken for a write. The body is read and put back.
func isRead(r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	if r.Method != http.MethodPost || r.Body == nil {
		return false
	}
	raw, err := io.ReadAll(r.Body)
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if err != nil {
		return false
	}
	var body struct {
		Query string `json:"query"`
	}
	if json.Unmarshal(raw, &body) != nil || body.Query == "" {
		return false
	}
	doc, perr := parser.ParseQuery(&ast.Source{Input: body.Query})
	if perr != nil || len(doc.Operations) == 0 {
		return false
	}
	for _, op := range doc.Operations {
		if op.Operation != ast.Query {
			return false
		}
	}
	return true
}
