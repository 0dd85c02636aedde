package httpadapter

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Form-encoded bodies: a request with "body_encoding": "form" sends its
// body as application/x-www-form-urlencoded, as Stripe and many payment
// and billing systems take it. The body is written as JSON like any other
// (an object of fields whose strings are templates); form_style says how
// what is not a plain field is named:
//
//   - "brackets" (the default, Stripe's): metadata[reason]=x for a field of
//     an object, items[0][id]=y for an element of a list;
//   - "repeat": a list is its name once per element (tag=a&tag=b), and an
//     object inside the body cannot be said, so a file that writes one does
//     not load.
//
// Fields are written in name order and list elements in theirs, so the
// same call sends the same bytes; a null field is left out.

// formStyle is how a form body names nested values; "" is a JSON body.
type formStyle string

// The form styles a file may name.
const (
	formBrackets formStyle = "brackets"
	formRepeat   formStyle = "repeat"
)

const (
	contentTypeForm = "application/x-www-form-urlencoded"
	contentTypeJSON = "application/json"
)

// encodeBody writes a rendered body as style says, with the content type
// it is sent under. A form body that cannot be written (a value the style
// cannot name) is an error of the file, and nothing is sent.
func encodeBody(body any, style formStyle) (raw []byte, contentType string, err error) {
	if style == "" {
		raw, err = json.Marshal(body)
		return raw, contentTypeJSON, err
	}
	raw, err = encodeForm(body, style)
	return raw, contentTypeForm, err
}

// encodeForm writes body, an object, as form fields in style.
func encodeForm(body any, style formStyle) ([]byte, error) {
	root, ok := body.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a form body is an object of fields, and this one is %s", jsonKind(body))
	}
	var b strings.Builder
	add := func(name string, v any) {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(name))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(text(v)))
	}
	var walk func(name string, v any, depth int) error
	walk = func(name string, v any, depth int) error {
		switch x := v.(type) {
		case nil:
			return nil
		case map[string]any:
			if style == formRepeat && depth > 0 {
				return fmt.Errorf("%s is an object, which form_style repeat cannot send", name)
			}
			for _, k := range slices.Sorted(maps.Keys(x)) {
				child := k
				if depth > 0 {
					child = name + "[" + k + "]"
				}
				if err := walk(child, x[k], depth+1); err != nil {
					return err
				}
			}
		case []any:
			for i, el := range x {
				child := name + "[" + strconv.Itoa(i) + "]"
				if style == formRepeat {
					if depth > 1 || isComposite(el) {
						return fmt.Errorf("%s holds %s, which form_style repeat cannot send", name, jsonKind(el))
					}
					child = name
				}
				if err := walk(child, el, depth+1); err != nil {
					return err
				}
			}
		default:
			add(name, x)
		}
		return nil
	}
	if err := walk("", root, 0); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

func isComposite(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// jsonKind names a value's JSON type for a message.
func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case nil:
		return "null"
	}
	return "a single value"
}

// bodyEncoding reads how a request's body is written: the request's own
// body_encoding and form_style, else the file's. It refuses a form body
// that is not an object, a form_style without a form body, and, in the
// repeat style, an object or a list of lists inside the body.
func (c *compiler) bodyEncoding(ptr string, r RequestDesc) formStyle {
	encoding, style := r.BodyEncoding, r.FormStyle
	if encoding == "" {
		encoding = c.fileEncoding
	}
	if style == "" {
		style = c.fileFormStyle
	}
	if encoding != "form" {
		if r.FormStyle != "" {
			c.fail(ptr+"/form_style", "form_style applies to a form body, and this request sends JSON",
				`add "body_encoding": "form", or remove form_style`)
		}
		return ""
	}
	if style == "" {
		style = string(formBrackets)
	}
	if r.Body == nil {
		return formStyle(style)
	}
	root, ok := r.Body.(map[string]any)
	if !ok {
		c.fail(ptr+"/body", fmt.Sprintf("a form body is an object of fields, and this one is %s", jsonKind(r.Body)),
			`write the body as an object, e.g. {"amount": "{args.amount_cents}"}`)
		return formStyle(style)
	}
	if style == string(formRepeat) {
		for _, k := range slices.Sorted(maps.Keys(root)) {
			fp := ptr + "/body/" + escapePointer(k)
			switch x := root[k].(type) {
			case map[string]any:
				c.fail(fp, fmt.Sprintf("%s is an object, which form_style repeat cannot send (it names each field once per value: tag=a&tag=b)", k),
					`use "form_style": "brackets" (`+k+`[field]=value, as Stripe takes it), or write each field at the top of the body`)
			case []any:
				for i, el := range x {
					if isComposite(el) {
						c.fail(fmt.Sprintf("%s/%d", fp, i), fmt.Sprintf("%s holds %s, which form_style repeat cannot send", k, jsonKind(el)),
							`use "form_style": "brackets" (`+k+`[0][field]=value), or send a list of single values`)
					}
				}
			}
		}
	}
	return formStyle(style)
}

// formCarriesKey refuses a repeat-style form write whose idempotency key or
// precondition version would be set inside an object of its body, which
// that style cannot send.
func (c *compiler) formCarriesKey(ptr string, act *action, idemField string) {
	if act.request == nil || act.request.form != formRepeat {
		return
	}
	fields := map[string]string{"/idempotency/body_field": idemField}
	if act.pre != nil {
		fields[ptr+"/precondition/body_field"] = act.pre.bodyField
	}
	for at, f := range fields {
		if strings.Count(f, "/") > 1 {
			c.fail(at, fmt.Sprintf("action %s sends a repeat-style form, which cannot hold %s inside an object", act.spec.Name, f),
				`use "form_style": "brackets", or a field at the top of the body (e.g. "/request_id")`)
		}
	}
}

// fileForm refuses a file-wide form_style without a file-wide form body.
func (c *compiler) fileForm(d *Description) {
	if d.FormStyle != "" && d.BodyEncoding != "form" {
		c.fail("/form_style", "form_style applies to form bodies, and the file's bodies are JSON",
			`add "body_encoding": "form" beside it, or move form_style to the requests that send a form`)
	}
}
