package views

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"countersign/internal/invisible"
)

// DiffPart is a run of words of a text diff: kept, removed or added.
type DiffPart struct {
	Text string
	// Op is "=" for kept words, "-" for removed and "+" for added.
	Op string
}

// longTextRunes is where a value stops being read at a glance: longer,
// or on several lines, a change is shown as a diff with the whole texts a
// click away.
const longTextRunes = 80

// maxDiffCells bounds the word diff's table; texts larger than that are
// shown as the whole old text removed and the whole new text added.
const maxDiffCells = 400_000

// isLongText reports whether a quote line's values are shown as a diff:
// a long or multi-line text that changes from one value to another. A line
// with no old value changes nothing to diff against (it names the object,
// or a value being set): it is shown whole, as it is.
func isLongText(from, to string) bool {
	if from == "" {
		return false
	}
	return utf8.RuneCountInString(from) > longTextRunes || utf8.RuneCountInString(to) > longTextRunes ||
		strings.Contains(from, "\n") || strings.Contains(to, "\n")
}

// visible writes s for a page with every character a person cannot see,
// or that turns the text around, as a mark such as ⟨U+200B⟩: text that
// came from a system is shown as it is, not as it pretends to be.
func visible(s string) string {
	out, _ := invisible.Show(s)
	return out
}

// hasHidden reports whether any of the texts holds such a character.
func hasHidden(texts ...string) bool {
	for _, s := range texts {
		if _, hidden := invisible.Show(s); hidden {
			return true
		}
	}
	return false
}

var diffTokens = regexp.MustCompile(`\s+|\S+`)

// wordDiff compares two texts word by word (a longest common subsequence
// of words and the spaces between them) and returns the runs kept,
// removed and added, with hidden characters made visible.
func wordDiff(from, to string) []DiffPart {
	a := diffTokens.FindAllString(visible(from), -1)
	b := diffTokens.FindAllString(visible(to), -1)
	if len(a)*len(b) > maxDiffCells {
		return merge([]DiffPart{{Text: strings.Join(a, ""), Op: "-"}, {Text: strings.Join(b, ""), Op: "+"}})
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var parts []DiffPart
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			parts = append(parts, DiffPart{Text: a[i], Op: "="})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			parts = append(parts, DiffPart{Text: a[i], Op: "-"})
			i++
		default:
			parts = append(parts, DiffPart{Text: b[j], Op: "+"})
			j++
		}
	}
	for ; i < len(a); i++ {
		parts = append(parts, DiffPart{Text: a[i], Op: "-"})
	}
	for ; j < len(b); j++ {
		parts = append(parts, DiffPart{Text: b[j], Op: "+"})
	}
	return merge(parts)
}

// merge joins neighbouring runs into blocks: a space kept between two
// changes belongs to both, so "500 Market Street" → "77 Dock Road" reads
// as one phrase removed and one added, removed first.
func merge(parts []DiffPart) []DiffPart {
	var out []DiffPart
	var del, ins strings.Builder
	flush := func() {
		d, i := del.String(), ins.String()
		del.Reset()
		ins.Reset()
		// A side that is only the spaces shared with the other is no change.
		blankD, blankI := strings.TrimSpace(d) == "", strings.TrimSpace(i) == ""
		switch {
		case d == "" && i == "":
			return
		case blankD && blankI:
			out = append(out, DiffPart{Text: d, Op: "="})
			return
		case blankD:
			d = ""
		case blankI:
			i = ""
		}
		if d != "" {
			out = append(out, DiffPart{Text: d, Op: "-"})
		}
		if i != "" {
			out = append(out, DiffPart{Text: i, Op: "+"})
		}
	}
	for i, p := range parts {
		switch {
		case p.Op == "-":
			del.WriteString(p.Text)
		case p.Op == "+":
			ins.WriteString(p.Text)
		case strings.TrimSpace(p.Text) == "" && (del.Len() > 0 || ins.Len() > 0) && i+1 < len(parts) && parts[i+1].Op != "=":
			del.WriteString(p.Text)
			ins.WriteString(p.Text)
		default:
			flush()
			if n := len(out); n > 0 && out[n-1].Op == "=" {
				out[n-1].Text += p.Text
			} else if p.Text != "" {
				out = append(out, p)
			}
		}
	}
	flush()
	return out
}
