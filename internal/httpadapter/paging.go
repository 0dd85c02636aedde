package httpadapter

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"countersign/internal/adapter"
)

// PagingDesc says how a list answer continues on further pages, one of:
//
//   - HasMore alone: a JSON Pointer to a boolean; the list is not followed,
//     only marked truncated (the answer of a file without paging reads
//     has_more at the top);
//   - Next and Param: a JSON Pointer to the next page's cursor, sent as the
//     query parameter Param; no cursor (or an empty one) is the last page;
//   - PageParam and TotalPages: pages numbered from 1 in the query parameter
//     PageParam, TotalPages a JSON Pointer to their count (PocketBase's
//     "page" and "/totalPages");
//   - Link: true follows the answer's Link header's rel="next" URL, only
//     when it is under the system's base URL.
//
// MaxPages caps the requests of one list (default 10); a list with more is
// marked truncated, and a reference in words over it is refused rather
// than matched against part of the objects.
type PagingDesc struct {
	HasMore    string `json:"has_more"`
	Next       string `json:"next"`
	Param      string `json:"param"`
	PageParam  string `json:"page_param"`
	TotalPages string `json:"total_pages"`
	Link       bool   `json:"link"`
	MaxPages   int    `json:"max_pages"`
}

// paging is a compiled PagingDesc.
type paging struct {
	hasMore, next, param, pageParam, totalPages string
	link                                        bool
	maxPages                                    int
}

const defaultMaxPages = 10

// paging compiles a PagingDesc at ptr; nil gives nil.
func (c *compiler) paging(ptr string, d *PagingDesc) *paging {
	if d == nil {
		return nil
	}
	p := &paging{hasMore: d.HasMore, next: d.Next, param: d.Param, pageParam: d.PageParam, totalPages: d.TotalPages,
		link: d.Link, maxPages: d.MaxPages}
	if p.maxPages == 0 {
		p.maxPages = defaultMaxPages
	}
	ways := 0
	for _, set := range []bool{d.Next != "" || d.Param != "", d.PageParam != "" || d.TotalPages != "", d.Link} {
		if set {
			ways++
		}
	}
	switch {
	case ways > 1:
		c.fail(ptr, "paging gives more than one way to the next page",
			`keep one of {"next", "param"}, {"page_param", "total_pages"} and {"link": true}`)
	case ways == 0 && d.HasMore == "":
		c.fail(ptr, "paging says nothing", `add {"next": "/next_cursor", "param": "cursor"}, {"page_param": "page", "total_pages": "/totalPages"}, {"link": true} or {"has_more": "/has_more"}`)
	case (d.Next == "") != (d.Param == ""):
		c.fail(ptr, "a cursor needs both next (where the answer gives it) and param (the query parameter it is sent in)",
			`write e.g. {"next": "/next_cursor", "param": "cursor"}`)
	case (d.PageParam == "") != (d.TotalPages == ""):
		c.fail(ptr, "page numbers need both page_param (the query parameter) and total_pages (where the answer counts the pages)",
			`write e.g. {"page_param": "page", "total_pages": "/totalPages"}`)
	}
	return p
}

// A list of several pages is bounded as a whole, not only per page: its
// requests share one deadline and one budget of answer bytes (a var for
// tests).
const listTimeout = 30 * time.Second

var listBytes = 8 << 20

// readList GETs path and the pages after it as p says, up to its cap, a
// cursor or page seen before, the list's deadline and byte budget, or
// until more than enough items are read (enough 0: no limit), and returns
// the items at the pointer items of every page, whether the system has
// more, and whether every page held a list there. Without paging it is one
// request, with more read from has_more.
func (a *Adapter) readList(ctx context.Context, path, items string, p *paging, enough int) (out []any, more, listed bool, err error) {
	if p == nil {
		answer, err := a.read(ctx, path)
		if err != nil {
			return nil, false, false, err
		}
		v, _ := lookupPointer(answer, items)
		l, ok := v.([]any)
		return l, hasMore(answer), ok, nil
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	listed = true
	seen := map[string]bool{path: true}
	spent := 0
	for page := 1; ; page++ {
		answer, header, size, err := a.page(ctx, path)
		if err != nil {
			return nil, false, false, err
		}
		spent += size
		v, _ := lookupPointer(answer, items)
		l, ok := v.([]any)
		listed = listed && ok
		out = append(out, l...)
		next, more := a.nextPage(p, path, page, answer, header)
		if !more {
			return out, false, listed, nil
		}
		if next == "" || page >= p.maxPages || (enough > 0 && len(out) > enough) {
			return out, true, listed, nil
		}
		if seen[next] || spent >= listBytes {
			// A cursor that comes round again would page forever; past
			// the budget the rest is not read. Either way the list is cut.
			a.log.WarnContext(ctx, "httpadapter: a list's paging stopped", "system", a.name, "path", next,
				"repeated", seen[next], "bytes", spent)
			return out, true, listed, nil
		}
		seen[next] = true
		path = next
	}
}

// nextPage is the path of the page after this one, and whether there is
// one; a next page with no path ("" and true) is one the adapter does not
// follow (has_more alone, or a Link elsewhere).
func (a *Adapter) nextPage(p *paging, path string, page int, answer any, header http.Header) (string, bool) {
	if p.hasMore != "" {
		if v, _ := lookupPointer(answer, p.hasMore); v != true {
			return "", false
		}
	}
	switch {
	case p.next != "":
		v, _ := lookupPointer(answer, p.next)
		cursor := text(v)
		if cursor == "" {
			return "", false
		}
		return withQuery(path, p.param, cursor), true
	case p.pageParam != "":
		v, _ := lookupPointer(answer, p.totalPages)
		total, ok := v.(int64)
		if !ok || int64(page) >= total {
			return "", false
		}
		return withQuery(path, p.pageParam, strconv.Itoa(page+1)), true
	case p.link:
		next := linkNext(header.Values("Link"))
		if next == "" {
			return "", false
		}
		// Only a page of the system itself is read: the request carries
		// the system's secret.
		rest, ok := a.underBase(path, next)
		if !ok {
			a.log.Warn("httpadapter: a Link to a next page outside the system's base URL is not followed", "system", a.name, "link", next)
			return "", true
		}
		return rest, true
	}
	return "", p.hasMore != ""
}

// underBase resolves a Link's target against the request it came with
// (path, under the base URL) and returns its path under the base URL; a
// target elsewhere, or with a dot segment in its path (which a server
// may resolve to outside the base), is not.
func (a *Adapter) underBase(path, link string) (string, bool) {
	ref, err := url.Parse(link)
	if err != nil {
		return "", false
	}
	for _, seg := range strings.Split(strings.ToLower(ref.EscapedPath()), "/") {
		if seg != "" && strings.Trim(strings.ReplaceAll(seg, "%2e", "."), ".") == "" {
			return "", false
		}
	}
	req, err := url.Parse(a.base + path)
	if err != nil {
		return "", false
	}
	rest, ok := strings.CutPrefix(req.ResolveReference(ref).String(), a.base)
	if !ok || !strings.HasPrefix(rest, "/") {
		return "", false
	}
	return rest, true
}

// withQuery sets the query parameter name of path to value; "" when the
// path's query cannot be parsed, so that paging stops rather than drop
// the rest of the query (the file's filter among it).
func withQuery(path, name, value string) string {
	base, query, _ := strings.Cut(path, "?")
	q, err := url.ParseQuery(query)
	if err != nil {
		return ""
	}
	q.Set(name, value)
	return base + "?" + q.Encode()
}

// linkNext reads the rel="next" URL of Link headers (RFC 8288).
func linkNext(values []string) string {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
			if !ok {
				continue
			}
			for _, prm := range strings.Split(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(prm), "=")
				if strings.EqualFold(k, "rel") && strings.Contains(" "+strings.Trim(val, `"`)+" ", " next ") {
					return strings.Trim(strings.TrimSpace(target), "<>")
				}
			}
		}
	}
	return ""
}

// pagedOut is the refusal of a reference in words over a list the adapter
// could not read to its end: matching part of the objects would guess.
func pagedOut(kind string, pages int) error {
	return adapter.Invalid(map[string]string{kind + "_id": fmt.Sprintf(
		"there are more %ss than the %d pages read, so words cannot be matched against all of them: give the %s's id", kind, pages, kind)})
}
