package console

import (
	"countersign/internal/locale"
)

// say is one of the console's texts written in code (console.*): English
// from the catalogue with the installation's overrides, its named
// parameters filled in, so a sentence stays one message.
func say(id string, p locale.Params) string { return locale.Console(id, p) }

// sayN is the plural console text id for count; the count as shown (with
// thousands separators) is the parameter "N".
func sayN(id string, count int64, p locale.Params) string {
	q := locale.Params{"N": thousands(count)}
	for k, v := range p {
		q[k] = v
	}
	return locale.ConsoleN(id, int(count), q)
}
