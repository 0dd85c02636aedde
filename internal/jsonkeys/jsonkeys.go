// Package jsonkeys finds a JSON object that names the same key twice. The
// standard decoder keeps the last of them, while a gateway, a log or a
// person reading the body may take the first: one body would then say two
// things. Every JSON body the console accepts from an assistant (the API,
// the MCP server, an action's arguments) is refused when Duplicate finds
// one.
//
// Go's decoder also matches a key to a struct field regardless of case
// ("Method" fills method, "ſtatus" fills status), so keys that differ only
// in case are the same key here.
package jsonkeys

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxPath bounds a reported path, which is shown and used as a field name.
const maxPath = 200

// frame is one open object or array.
type frame struct {
	path   string
	object bool
	keys   map[string]string // folded key → the key as first spelt
	key    string            // the member being read
	index  int
	name   bool // the next string token of the object is a name
}

// Found is a key named twice in one object.
type Found struct {
	// Path names the second key from the top: "args.amount_cents".
	Path string
	// Key is the second key; First is the same key as first spelt, which
	// differs from Key only in case.
	Key, First string
}

// Duplicate reports the first key that an object of data names twice.
// Data that is not JSON has no duplicate: the decoder that reads it says
// what is wrong. Keys are compared as decoded and folded as encoding/json
// folds them, so "a", "\u0061" and "A" are the same key.
func Duplicate(data []byte) (Found, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return Found{}, false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && top != nil && top.object && top.name {
			top.key, top.name = s, false
			folded := fold(s)
			if spelt, ok := top.keys[folded]; ok {
				return Found{Path: member(top), Key: s, First: spelt}, true
			}
			top.keys[folded] = s
			continue
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				f := &frame{object: d == '{', name: d == '{'}
				if f.object {
					f.keys = map[string]string{}
				}
				if top != nil {
					f.path = member(top)
				}
				stack = append(stack, f)
				continue
			default:
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return Found{}, false
				}
				top = stack[len(stack)-1]
			}
		}
		if top == nil {
			return Found{}, false // a lone scalar
		}
		// A value ended: its container moves to the next member.
		if top.object {
			top.name = true
		} else {
			top.index++
		}
	}
}

// member names the member f is reading: "args.amount_cents", "items[2]".
func member(f *frame) string {
	var p string
	if f.object {
		p = name(f.key)
		if f.path != "" {
			p = f.path + "." + p
		}
	} else {
		p = f.path + "[" + strconv.Itoa(f.index) + "]"
	}
	if len(p) > maxPath {
		p = p[:maxPath] + "…"
	}
	return p
}

// name makes a key safe to show and to key an error by: one holding a NUL
// or invalid UTF-8 is quoted in ASCII.
func name(k string) string {
	if strings.IndexByte(k, 0) >= 0 || !utf8.ValidString(k) {
		return strconv.QuoteToASCII(k)
	}
	return k
}

// fold maps each rune of k to the smallest of its case-folding orbit, as
// encoding/json does when it matches a key to a field.
func fold(k string) string {
	var b strings.Builder
	for _, r := range k {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}
