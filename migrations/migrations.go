// Package migrations holds the console's SQL schema changes, numbered and
// embedded into the binary so that a start applies whatever is missing.
//
// The numbers are not contiguous: there is no 00005 and no 00031. Each was
// skipped and never shipped (no file with it was ever committed on main), so
// no database has it and nothing is lost. goose applies the files in order of
// their numbers and records each one applied, so a gap is harmless; a new
// migration takes the next number after the highest, never a skipped one.
package migrations

import "embed"

// FS holds every migration file, in goose's annotated SQL format.
//
//go:embed *.sql
var FS embed.FS
