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
