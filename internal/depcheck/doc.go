// Package depcheck holds no code: its test enforces the direction of the
// dependencies between the console's packages (cmd → web → internal
// domain → store; views know nothing of the store or the domain), failing
// on any import that goes the wrong way from production code or from a
// test-helper package such as store/dbtest.
package depcheck
