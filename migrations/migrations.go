// Package migrations holds the console's SQL schema changes, numbered and
// embedded into the binary so that a start applies whatever is missing.
package migrations

import "embed"

// FS holds every migration file, in goose's annotated SQL format.
//
//go:embed *.sql
var FS embed.FS
