package locale

import (
	"strings"

	"github.com/nicksnyder/go-i18n/v2/i18n"
)

// accents maps ASCII letters to accented look-alikes: still readable, but
// no longer the English a hard-coded string would show.
var accents = strings.NewReplacer(
	"a", "á", "c", "ç", "e", "é", "i", "í", "n", "ñ", "o", "ó", "u", "ü", "y", "ý",
	"A", "Å", "C", "Ç", "E", "É", "I", "Î", "N", "Ñ", "O", "Ö", "U", "Ú", "Y", "Ý",
)

// PseudoText is text as the pseudo-locale writes it: between ⟦ and ⟧,
// letters accented, lengthened by about 40% (German and French commonly
// run that much longer than English), template actions {{…}} untouched.
func PseudoText(s string) string {
	if s == "" {
		return s
	}
	var b strings.Builder
	b.WriteString("⟦")
	letters := 0
	for rest := s; rest != ""; {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(accents.Replace(rest))
			letters += len(rest)
			break
		}
		b.WriteString(accents.Replace(rest[:i]))
		letters += i
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			b.WriteString(rest[i:])
			break
		}
		b.WriteString(rest[i : i+j+2])
		rest = rest[i+j+2:]
	}
	b.WriteString(strings.Repeat("·", (letters*2+4)/5))
	b.WriteString("⟧")
	return b.String()
}

func pseudoMessage(m *i18n.Message) *i18n.Message {
	return &i18n.Message{
		ID:    m.ID,
		Zero:  PseudoText(m.Zero),
		One:   PseudoText(m.One),
		Two:   PseudoText(m.Two),
		Few:   PseudoText(m.Few),
		Many:  PseudoText(m.Many),
		Other: PseudoText(m.Other),
	}
}
