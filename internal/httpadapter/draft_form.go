package httpadapter

import (
	"slices"
	"strings"
)

// formChoice gathers, while a form body is drafted, what its lists and
// objects need of the form style: the document's encoding says so for
// some (deepObject: brackets; form, exploded: the repeated name), and the
// others are a guess the notes name.
type formChoice struct {
	op *oaOperation
	// brackets and repeat name the fields the document encodes so;
	// guessed those it says nothing of.
	brackets, repeat, guessed []string
	// objects is true once the body holds an object, which only the
	// bracket style can send.
	objects bool
}

// joiners are the OpenAPI styles that send a list as one value, and what
// separates its elements.
var joiners = map[string]string{"form": "commas", "spaceDelimited": "spaces", "pipeDelimited": "vertical bars"}

// list drafts a form field that is a list of single values: a parameter
// of the element's type and a body of a one-element list, or, when the
// document joins the list into one value (style form unexploded, space or
// pipe delimited), a string parameter the list is written into. A list of
// objects or lists gives no parameter (nil): a person writes it.
func (fc *formChoice) list(d *drafter, field, pn string, s *oaSchema, desc string, enc oaEncoding) (param, value any) {
	if s.Items == nil || slices.Contains([]string{"object", "array"}, s.Items.typeName()) {
		return nil, nil
	}
	exploded := enc.Explode == nil || *enc.Explode
	if sep, ok := joiners[enc.Style]; ok && (enc.Style != "form" || !exploded) {
		d.note("-write %s: body field %s is a list sent as one value, its elements separated by %s: the parameter %s takes them written so.", fc.op.name(), field, sep, pn)
		return paramOf(pn, &oaSchema{Type: "string"}, desc+" Several are separated by "+sep+".", true), "{args." + pn + "}"
	}
	param = paramOf(pn, s.Items, desc, true)
	if param == nil {
		return nil, nil
	}
	switch {
	case enc.Style == "deepObject":
		fc.brackets = append(fc.brackets, field)
	case enc.Style == "form" || (enc.Style == "" && enc.Explode != nil):
		fc.repeat = append(fc.repeat, field)
	default:
		fc.guessed = append(fc.guessed, field)
	}
	d.note("-write %s: body field %s is a list; the draft sends one element, the parameter %s: add elements to the body by hand.", fc.op.name(), field, pn)
	return param, []any{"{args." + pn + "}"}
}

// object records a form field that is an object.
func (fc *formChoice) object(field string, enc oaEncoding) {
	fc.objects = true
	if enc.Style == "deepObject" {
		fc.brackets = append(fc.brackets, field)
	} else {
		fc.guessed = append(fc.guessed, field)
	}
}

// style chooses the body's form style: brackets when it holds an object
// or the document says deepObject, the repeated name when the document
// says so of its lists or says nothing (OpenAPI's default for a form is
// style form, exploded), and "" when the body holds neither list nor
// object. What the document does not say, and a list the chosen style
// sends otherwise than the document says, is noted.
func (fc *formChoice) style(d *drafter) formStyle {
	var style formStyle
	switch {
	case fc.objects || len(fc.brackets) > 0:
		style = formBrackets
	case len(fc.repeat) > 0 || len(fc.guessed) > 0:
		style = formRepeat
	default:
		return ""
	}
	example := map[formStyle]string{formBrackets: "name[field]=x, name[0]=y", formRepeat: "name=x&name=y"}[style]
	if len(fc.guessed) > 0 {
		d.note("-write %s: the document does not say how %s is encoded in the form (encoding.style): the draft guesses form_style %s (%s); check what the system reads.", fc.op.name(), strings.Join(fc.guessed, ", "), style, example)
	}
	if style == formBrackets && len(fc.repeat) > 0 {
		d.note("-write %s: the document sends %s as repeated names (tag=a&tag=b), but the body's objects need form_style brackets, which sends %s[0]=…; check the system reads that, or send the list by hand.", fc.op.name(), strings.Join(fc.repeat, ", "), fc.repeat[0])
	}
	return style
}

// formAtFileLevel says "body_encoding": "form" once for the file when
// every drafted write with a body sends a form, and form_style too when
// those that need one agree; it removes them from the requests then, and
// returns what the file says (nil: each request keeps its own).
func formAtFileLevel(actions []any) obj {
	var requests []obj
	for _, a := range actions {
		req, _ := a.(obj).get("request").(obj)
		if req.get("body") == nil {
			continue
		}
		if req.get("body_encoding") != "form" {
			return nil
		}
		requests = append(requests, req)
	}
	if len(requests) == 0 {
		return nil
	}
	var styles []string
	for _, req := range requests {
		if s, ok := req.get("form_style").(string); ok {
			styles = append(styles, s)
		}
	}
	slices.Sort(styles)
	file := obj{{"body_encoding", "form"}}
	drop := []string{"body_encoding"}
	if styles = slices.Compact(styles); len(styles) == 1 {
		file = append(file, kv{"form_style", styles[0]})
		drop = append(drop, "form_style")
	}
	for _, a := range actions {
		a := a.(obj)
		if i := a.index("request"); i >= 0 {
			a[i].v = a[i].v.(obj).without(drop...)
		}
	}
	return file
}

// index is the position of key k, or -1.
func (o obj) index(k string) int {
	return slices.IndexFunc(o, func(f kv) bool { return f.k == k })
}

// get is the value of key k, or nil.
func (o obj) get(k string) any {
	if i := o.index(k); i >= 0 {
		return o[i].v
	}
	return nil
}

// without is o less the keys ks.
func (o obj) without(ks ...string) obj {
	return slices.DeleteFunc(slices.Clone(o), func(f kv) bool { return slices.Contains(ks, f.k) })
}
