package store

// The store's SQL builders, for the test that prepares every statement
// (sql_prepare_test.go) to call where a statement is built at run time.
var (
	QueueSelect    = queueSelect
	QueueJoins     = queueJoins
	DistinctValues = distinctValues
	HistogramSQL   = histogramSQL
)

// PendingCap is the cap the capped counts write into their statements.
const PendingCap = pendingCap

// QueueWhere is the approval queue's filter, of every condition (all set)
// or of none; with all, the placeholders start at $first.
func QueueWhere(all bool, first int) string {
	f := QueueFilter{}
	if all {
		n := int64(1)
		f = QueueFilter{System: "s", Action: "a", CustomerRef: "c", MinCents: &n, MaxCents: &n, OlderThan: 1, ClaimedBy: 1}
	}
	args := make([]any, first-1)
	return queueWhere(f, &args)
}
