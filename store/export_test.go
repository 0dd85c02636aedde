package store

// The store's SQL builders, for the test that prepares every statement
// (sql_prepare_test.go) to call where a statement is built at run time.
var (
	QueueSelect    = queueSelect
	DistinctValues = distinctValues
	HistogramSQL   = histogramSQL
)

// QueueWhere is the approval queue's filter with placeholders from $first.
func QueueWhere(first int) string {
	where, _ := queueWhere(QueueFilter{}, first)
	return where
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
