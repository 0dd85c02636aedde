package depcheck_test

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxRootREADMELines bounds the root README: it holds what a newcomer needs
// and a table of where each topic lives; the chapters live beside their code.
const maxRootREADMELines = 400

// inlineCode matches a Markdown code span.
var inlineCode = regexp.MustCompile("`[^`]*`")

// mdLink matches an inline Markdown link or image, capturing its target.
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// TestRootREADMEStaysShort fails when the root README grows past
// maxRootREADMELines: a new chapter belongs beside its package or in docs/.
func TestRootREADMEStaysShort(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > maxRootREADMELines {
		t.Errorf("README.md has %d lines, more than %d: move the chapter to the package it describes or to docs/, "+
			"and add one line for it under \"Where each topic lives\"", n, maxRootREADMELines)
	}
}

// TestMarkdownLinksResolve fails on a relative link in any Markdown file of
// the repository whose target file is missing, or whose #fragment names no
// heading of the target, so moving a chapter cannot leave a link behind.
func TestMarkdownLinksResolve(t *testing.T) {
	root := "../.."
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".md") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		for _, l := range relativeLinks(t, path) {
			checked++
			file, frag, _ := strings.Cut(l.target, "#")
			target := path
			if file != "" {
				target = filepath.Join(filepath.Dir(path), filepath.FromSlash(file))
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s:%d: link to %s: no such file", rel, l.line, l.target)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(target, ".md") && !headingAnchors(t, target)[frag] {
				t.Errorf("%s:%d: link to %s: no heading with anchor #%s there", rel, l.line, l.target, frag)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no relative Markdown links found: the walk is broken")
	}
}

type link struct {
	target string
	line   int
}

// relativeLinks returns the links of a Markdown file outside code fences
// and inline code that point into the repository (no scheme, no mailto).
func relativeLinks(t *testing.T, path string) []link {
	t.Helper()
	var out []link
	forEachProseLine(t, path, func(n int, line string) {
		for _, m := range mdLink.FindAllStringSubmatch(stripInlineCode(line), -1) {
			target := strings.Trim(m[1], "<>")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			out = append(out, link{target, n})
		}
	})
	return out
}

// headingAnchors returns the GitHub-style anchors of a Markdown file's
// headings: lower case, punctuation but hyphens and underscores dropped,
// spaces turned into hyphens.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	anchors := map[string]bool{}
	forEachProseLine(t, path, func(_ int, line string) {
		if !strings.HasPrefix(line, "#") {
			return
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127 && !strings.ContainsRune("’“”—–…·", r):
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	})
	return anchors
}

// forEachProseLine calls fn with every line of a Markdown file that is not
// inside a fenced code block.
func forEachProseLine(t *testing.T, path string, fn func(n int, line string)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	fenced := false
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			fn(n, line)
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
}

// stripInlineCode removes `code spans` from a line, so a bracket in code is
// not read as a link.
func stripInlineCode(line string) string {
	return inlineCode.ReplaceAllString(line, "")
}
