// Package depcheck holds no code: its test enforces the direction of the
// dependencies between the console's packages (cmd → web → internal
// domain → store; views know nothing of the store or the domain), failing
// on any production import that goes the wrong way.
package depcheck
