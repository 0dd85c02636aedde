// Package migrations holds the console's SQL schema changes, numbered and
// embedded into the binary so that a start applies whatever is missing.
//
// The numbers are not contiguous: there is no 00005. That number was skipped
// and never shipped (no file with it was ever committed), so no database has
// it and nothing is lost. goose applies the files in order of their numbers
// and records each one applied, so a gap is harmless; a new migration takes
// the next number after the highest, never 00005.
package migrations

import "embed"

// FS holds every migration file, in goose's annotated SQL format.
//
//go:embed *.sql
var FS embed.FS
