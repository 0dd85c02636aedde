// Package static holds the console's CSS, htmx and icons, embedded into the
// binary and served under content-hashed names with a year-long cache, so a
// changed file always gets a new URL.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"path"
	"strings"
)

//go:embed *.css *.js *.svg
var files embed.FS

// Prefix is where the files are served.
const Prefix = "/static/"

var (
	byName   = map[string]string{} // "app.css" → "/static/app.3f2a1b4c5d6e.css"
	byHashed = map[string]string{} // "app.3f2a1b4c5d6e.css" → "app.css"
)

func init() {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		b, err := files.ReadFile(e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		ext := path.Ext(e.Name())
		hashed := strings.TrimSuffix(e.Name(), ext) + "." + hex.EncodeToString(sum[:6]) + ext
		byName[e.Name()] = Prefix + hashed
		byHashed[hashed] = e.Name()
	}
}

// URL returns the content-hashed URL of an embedded file. It panics on a
// name that is not embedded, which the views' tests catch.
func URL(name string) string {
	u, ok := byName[name]
	if !ok {
		panic("static: no embedded file " + name)
	}
	return u
}

// Lookup returns the content and type of a file by its hashed name (the
// part of the URL after Prefix); ok is false for any other name, so a stale
// page cannot pin an old file under a new name.
func Lookup(hashed string) (content []byte, contentType string, ok bool) {
	name, ok := byHashed[hashed]
	if !ok {
		return nil, "", false
	}
	b, err := files.ReadFile(name)
	if err != nil {
		return nil, "", false
	}
	return b, mime.TypeByExtension(path.Ext(name)), true
}
