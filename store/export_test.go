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

// TaskListWheres are the task list's filters with every condition, their
// placeholders after taskListMine's $1 and $2 ($3 to $5).
func TaskListWheres() []string {
	var out []string
	for _, need := range []string{"mine", "approval"} {
		a := sqlArgs{nil, nil}
		out = append(out, taskListWhere(TaskListFilter{Query: "q", State: "active", Action: "a", Need: need}, &a))
	}
	return out
}

// TaskSearchWhere is the task list's search alone, as $1.
func TaskSearchWhere() string {
	return taskListWhere(TaskListFilter{Query: "q"}, &sqlArgs{})
}
