package httpadapter

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// positions maps every JSON Pointer of a document to the line its value
// starts on, so that an error can name the line to fix.
type positions map[string]int

// locate walks raw and records the line of every value.
func locate(raw []byte) positions {
	pos := positions{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	line := func() int {
		off := int(dec.InputOffset())
		for off < len(raw) && strings.IndexByte(" \t\r\n,:", raw[off]) >= 0 {
			off++
		}
		return bytes.Count(raw[:min(off, len(raw))], []byte("\n")) + 1
	}
	var walk func(ptr string) bool
	walk = func(ptr string) bool {
		pos[ptr] = line()
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return false
				}
				key, _ := k.(string)
				if !walk(ptr + "/" + escapePointer(key)) {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if !walk(ptr + "/" + strconv.Itoa(i)) {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		}
		return true
	}
	walk("")
	return pos
}

// line returns the line of ptr or of its nearest parent.
func (p positions) line(ptr string) int {
	for {
		if l, ok := p[ptr]; ok {
			return l
		}
		i := strings.LastIndexByte(ptr, '/')
		if i < 0 {
			return 1
		}
		ptr = ptr[:i]
	}
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// pointer joins tokens into a JSON Pointer.
func pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteString("/" + escapePointer(t))
	}
	return b.String()
}

// lookupPointer reads the value at a JSON Pointer ("" is v itself); "*"
// is not special here.
func lookupPointer(v any, ptr string) (any, bool) {
	if ptr == "" {
		return v, true
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			val, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = val
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}
