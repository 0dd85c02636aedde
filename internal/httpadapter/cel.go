package httpadapter

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/ext"

	"countersign/internal/adapter"
	"countersign/internal/money"
)

// The variables an expression may use. Which of them are bound depends on
// where the expression is: see the table in README.md beside this file.
var celVariables = []string{"args", "vars", "target", "account", "principal", "object", "ref", "now", "key",
	"response", "answer", "result", "effect", "status", "body", "dry_run", "id", "before", "after"}

// newEnv is the CEL environment of every expression: the variables above
// (dynamic JSON values), the strings and optional-value extensions, and
// four functions: days_between(from, to) counts whole UTC calendar days,
// money(cents, currency) formats an amount ("$42.10"; per locale in a
// quote's texts, "42,10 €" in French: moneyIn), major_units(cents,
// currency) writes it as a plain decimal in whole units for a system that
// reads one ("12.50"; "1250" in yen), short_hash(s)
// gives 8 hex digits of SHA-256 for references derived from a key, and
// filter_quote(s) makes s a quoted literal of a filter language.
func newEnv() (*cel.Env, error) {
	opts := []cel.EnvOption{ext.Strings(), cel.OptionalTypes()}
	for _, v := range celVariables {
		opts = append(opts, cel.Variable(v, cel.DynType))
	}
	opts = append(opts,
		cel.Function("days_between", cel.Overload("days_between_timestamp_timestamp",
			[]*cel.Type{cel.TimestampType, cel.TimestampType}, cel.IntType,
			cel.BinaryBinding(func(a, b ref.Val) ref.Val {
				from, _ := a.Value().(time.Time)
				to, _ := b.Value().(time.Time)
				return types.Int(calendarDays(from, to))
			}))),
		// money is bound at each evaluation (moneyIn): it writes the
		// amount as the locale being rendered writes it.
		cel.Function("money", cel.Overload("money_int_string",
			[]*cel.Type{cel.IntType, cel.StringType}, cel.StringType, cel.LateFunctionBinding())),
		cel.Function("major_units", cel.Overload("major_units_int_string",
			[]*cel.Type{cel.IntType, cel.StringType}, cel.StringType,
			cel.BinaryBinding(func(a, b ref.Val) ref.Val {
				minor, _ := a.Value().(int64)
				currency, _ := b.Value().(string)
				return types.String(money.Major(minor, currency))
			}))),
		cel.Function("filter_quote", cel.Overload("filter_quote_string",
			[]*cel.Type{cel.StringType}, cel.StringType,
			cel.UnaryBinding(func(a ref.Val) ref.Val {
				s, _ := a.Value().(string)
				if strings.ContainsRune(s, '\\') {
					return types.WrapErr(errBackslash)
				}
				return types.String(filterQuote(s))
			}))),
		cel.Function("short_hash", cel.Overload("short_hash_string",
			[]*cel.Type{cel.StringType}, cel.StringType,
			cel.UnaryBinding(func(a ref.Val) ref.Val {
				s, _ := a.Value().(string)
				sum := sha256.Sum256([]byte(s))
				return types.String(hex.EncodeToString(sum[:4]))
			}))),
	)
	return cel.NewEnv(opts...)
}

// errBackslash is filter_quote refusing a value with a backslash: a
// filter language such as PocketBase's (fexpr) ends a literal at a quote
// not preceded by a backslash and undoes only \", so no escaping of a
// backslash holds there (a value ending in \ would leave the literal
// open and make the next placeholder filter syntax). The call is refused
// as invalid_arguments naming the argument, before anything is sent
// (Adapter.broken).
var errBackslash = errors.New("filter_quote refuses a value containing a backslash")

// filterQuote makes s (which holds no backslash) one double-quoted string
// literal of a PocketBase-style filter language: every double quote is
// escaped with a backslash, so nothing in s can end the literal and add a
// condition (`" || id != "` stays text). It is not for SQL, where a
// double quote delimits an identifier.
func filterQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r == '"' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// calendarDays counts whole calendar days (UTC dates) from from to to.
func calendarDays(from, to time.Time) int64 {
	f := from.UTC()
	t := to.UTC()
	fd := time.Date(f.Year(), f.Month(), f.Day(), 0, 0, 0, 0, time.UTC)
	td := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return int64(td.Sub(fd).Hours() / 24)
}

// expr is a compiled CEL expression and where it was written.
type expr struct {
	src string
	at  string // the file position, for errors at run time
	// ptr is the JSON Pointer it was written at and owner what it belongs
	// to ("action issue_refund"), for errors at run time.
	ptr, owner string
	prg        cel.Program
	// tree is the parsed expression, read at load to find which arguments
	// it uses (shown.go).
	tree celast.Expr
}

// eval runs the expression and returns its value as plain Go (JSON-shaped).
func (e *expr) eval(vars map[string]any) (any, error) {
	act, err := cel.FunctionVars(vars, moneyIn(vars))
	if err != nil {
		return nil, &exprError{e: e, err: err}
	}
	out, _, err := e.prg.Eval(act)
	if err != nil {
		return nil, &exprError{e: e, err: err}
	}
	v, err := toNative(out)
	if err != nil {
		return nil, &exprError{e: e, err: err}
	}
	return v, nil
}

// exprError is an expression of the file that failed at run time; the
// adapter answers it as a description_error naming the expression
// (Adapter.broken).
type exprError struct {
	e   *expr
	err error
}

func (x *exprError) Error() string { return fmt.Sprintf("%s: %s: %v", x.e.at, x.e.src, x.err) }

func (x *exprError) Unwrap() error { return x.err }

func (e *expr) bool(vars map[string]any) (bool, error) {
	v, err := e.eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, &exprError{e: e, err: fmt.Errorf("gave %T, not a boolean", v)}
	}
	return b, nil
}

// toNative turns a CEL value into JSON-shaped Go: maps, slices, strings,
// int64, float64, bool and nil; timestamps become RFC 3339 strings.
func toNative(v ref.Val) (any, error) {
	switch x := v.(type) {
	case types.Null:
		return nil, nil
	case types.String:
		return string(x), nil
	case types.Int:
		return int64(x), nil
	case types.Uint:
		return int64(x), nil
	case types.Double:
		return float64(x), nil
	case types.Bool:
		return bool(x), nil
	case types.Timestamp:
		return x.Time.UTC().Format(time.RFC3339), nil
	case types.Duration:
		return x.Duration.String(), nil
	case *types.Err:
		return nil, x
	case traits.Mapper:
		out := map[string]any{}
		it := x.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			val, err := toNative(x.Get(k))
			if err != nil {
				return nil, err
			}
			out[fmt.Sprint(k.Value())] = val
		}
		return out, nil
	case traits.Lister:
		var out []any
		it := x.Iterator()
		for it.HasNext() == types.True {
			val, err := toNative(it.Next())
			if err != nil {
				return nil, err
			}
			out = append(out, val)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}
	if o, ok := v.(interface{ HasValue() bool }); ok && !o.HasValue() {
		return nil, nil
	}
	return normalise(v.Value()), nil
}

// normalise gives decoded JSON the shape expressions expect: whole numbers
// as int64 (so that cents add up as integers), others as float64.
func normalise(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case float64:
		if x == float64(int64(x)) {
			return int64(x)
		}
		return x
	case int:
		return int64(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = normalise(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = normalise(val)
		}
		return out
	}
	return v
}

// decodeJSON decodes an answer into normalised JSON values.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return normalise(v), nil
}

// template is text with {expression} placeholders, and the JSON Pointer
// it was written at.
type template struct {
	src   string
	ptr   string
	parts []templatePart
	// byLocale, for a per-locale quote text, holds the template of every
	// locale other than the file's default (locale.go).
	byLocale map[string]*template
}

type templatePart struct {
	text string
	expr *expr
}

// whole reports whether the template is exactly one placeholder, so that
// a body keeps the value's type.
func (t *template) whole() bool { return len(t.parts) == 1 && t.parts[0].expr != nil }

// splitTemplate cuts src into text and placeholder sources. A placeholder
// runs from "{" to its matching "}", skipping braces inside quotes, so CEL
// map literals work inside it.
func splitTemplate(src string) (parts []string, isExpr []bool, err error) {
	var text strings.Builder
	for i := 0; i < len(src); i++ {
		if src[i] != '{' {
			text.WriteByte(src[i])
			continue
		}
		depth, j := 0, i
		var quote byte
	scan:
		for ; j < len(src); j++ {
			c := src[j]
			switch {
			case quote != 0:
				if c == '\\' {
					j++
				} else if c == quote {
					quote = 0
				}
			case c == '\'' || c == '"':
				quote = c
			case c == '{':
				depth++
			case c == '}':
				depth--
				if depth == 0 {
					break scan
				}
			}
		}
		if j >= len(src) {
			return nil, nil, fmt.Errorf("the placeholder at character %d has no closing }", i+1)
		}
		if text.Len() > 0 {
			parts, isExpr = append(parts, text.String()), append(isExpr, false)
			text.Reset()
		}
		inner := strings.TrimSpace(src[i+1 : j])
		if inner == "" {
			return nil, nil, fmt.Errorf("the placeholder at character %d is empty", i+1)
		}
		parts, isExpr = append(parts, inner), append(isExpr, true)
		i = j
	}
	if text.Len() > 0 {
		parts, isExpr = append(parts, text.String()), append(isExpr, false)
	}
	return parts, isExpr, nil
}

// render evaluates the template into text. In a path, escape is
// adapter.PathSegment before a "?", which refuses a value that would move
// the path (invalid_arguments), and url.QueryEscape after it.
func (t *template) render(vars map[string]any, path bool) (string, error) {
	var b strings.Builder
	inQuery := false
	for _, p := range t.parts {
		if p.expr == nil {
			b.WriteString(p.text)
			if strings.Contains(p.text, "?") {
				inQuery = true
			}
			continue
		}
		v, err := p.expr.eval(vars)
		if err != nil {
			return "", err
		}
		s := text(v)
		switch {
		case path && inQuery:
			s = url.QueryEscape(s)
		case path:
			// An argument was refused at validation (PathSegment); this
			// holds for every other value, a system's own data included.
			if s, err = adapter.PathSegment(strings.TrimPrefix(p.expr.src, "args."), s); err != nil {
				return "", err
			}
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// value evaluates a template as a body value: the value itself for a
// single placeholder, text otherwise.
func (t *template) value(vars map[string]any) (any, error) {
	if t.whole() {
		return t.parts[0].expr.eval(vars)
	}
	return t.render(vars, false)
}

// text writes a value into a template.
func text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
