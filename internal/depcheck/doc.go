// Package depcheck holds no code: its test enforces the direction of the
// dependencies between the console's packages (cmd → web → internal
// domain → store; views know nothing of the store or the domain), failing
// on any import that goes the wrong way from production code or from a
// test-helper package such as store/dbtest. Its documentation tests keep
// the root README short and every relative link of the Markdown files
// pointing at a file (and heading) that exists.
package depcheck
