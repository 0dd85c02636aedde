package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// TaskListFilter selects a page of the agents' task list. The search (Query)
// narrows everything, the counts included; State, Action and Need narrow the
// page and its total; After continues after the last row of the page before.
type TaskListFilter struct {
	Query string // customer or conversation, prefix match, or a whole task id
	State string
	// Action keeps tasks with at least one request of this action.
	Action string
	// Need is "" (any), "person" (needs a person), "unverified",
	// "approval", "paused", "handoff" (a hand-off nobody took) or "mine".
	Need string
	// UserID is who asks, for "mine": a card they hold or a hand-off they took.
	UserID int64
	// Now is when a card's hold is current, for "mine" (the lists set it
	// from their clock).
	Now time.Time
	// After is where the previous page ended; nil for the first page.
	After *TaskCursor
	// Limit is the page's size: 50 unless between 1 and 200.
	Limit int
}

// TaskCursor is where a page of the task list ended: its order is rank
// (0 a result needs checking, 1 something else needs a person, 2 active,
// 3 ended), then newest change first, then the id.
type TaskCursor struct {
	Rank      int32
	UpdatedAt time.Time
	ID        string
}

// TaskListRow is a task with what it needs from a person.
type TaskListRow struct {
	Task
	Unverified       int64 `db:"unverified"`
	AwaitingApproval int64 `db:"awaiting_approval"`
	AwaitingCustomer int64 `db:"awaiting_customer"`
	HandoffsWaiting  int64 `db:"handoffs_waiting"`
	Mine             bool  `db:"mine"`
	Rank             int32 `db:"rank"`
	// FirstTitle, FirstAction and FirstTarget are the task's first
	// request (its quote's title, "" when none was recorded; its action;
	// its object in words) and Requests how many it has: what the list
	// titles a task by.
	FirstTitle  string `db:"first_title"`
	FirstAction string `db:"first_action"`
	FirstTarget string `db:"first_target"`
	Requests    int64  `db:"requests"`
}

// TaskListCounts are the task list's totals: Total and Before for the
// filtered list (Before: rows ahead of the page), the rest per filter under
// the search alone.
type TaskListCounts struct {
	Total, Before                                                 int64
	All, NeedsPerson, Unverified, Approval, Paused, Handoff, Mine int64
	Active, PausedState, Cancelled, Closed                        int64
	// Actions counts tasks per action of their requests.
	Actions map[string]int64
}

// sqlArgs numbers a statement's arguments as its pieces are put together.
type sqlArgs []any

func (a *sqlArgs) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// taskListMine is the tasks of the asking user ($1) at $2: a card they
// hold or a hand-off they took.
const taskListMine = `WITH mine AS (
	SELECT i.task_id FROM approval_claims c JOIN invocations i ON i.id = c.invocation_id
	WHERE c.user_id = $1::bigint AND c.expires_at > $2::timestamptz
	UNION
	SELECT e.task_id FROM handoff_assignments h JOIN conversation_events e ON e.id = h.conversation_event_id
	WHERE h.user_id = $1::bigint AND e.task_id IS NOT NULL
)`

// taskListColumns are a list row's columns, read from the task's own row:
// triggers keep its counts and rank (migration 00022).
const taskListColumns = taskColumns + `, unverified_count AS unverified, awaiting_approval_count AS awaiting_approval,
	awaiting_customer_count AS awaiting_customer, handoffs_waiting,
	EXISTS (SELECT 1 FROM mine WHERE mine.task_id = t.id) AS mine, list_rank::int AS rank,
	coalesce(f.first_title, '') AS first_title, coalesce(f.first_action, '') AS first_action,
	coalesce(f.first_target, '') AS first_target, coalesce(f.requests, 0) AS requests`

// taskListFrom is the tasks a list row reads, each with its first request
// (on invocations_task: one index probe per row of the page).
const taskListFrom = `tasks t LEFT JOIN LATERAL (
	SELECT i.quote->>'title' AS first_title, i.action AS first_action, coalesce(nullif(i.target_display, ''), i.target_id) AS first_target,
		count(*) OVER () AS requests
	FROM invocations i WHERE i.task_id = t.id ORDER BY i.created_at, i.id LIMIT 1) f ON true`

// needRanks are the ranks a task that has the need can have: bounding
// the scan by them keeps a need's page to the tasks that need a person,
// however many ended.
var needRanks = map[string]string{"person": "t.list_rank <= 1", "unverified": "t.list_rank = 0",
	"approval": "t.list_rank <= 1", "paused": "t.list_rank <= 1", "handoff": "t.list_rank <= 1"}

// taskListWhere is the filter as conditions on tasks t; its arguments
// follow taskListMine's two.
func taskListWhere(f TaskListFilter, a *sqlArgs) string {
	conds := []string{"true"}
	if f.Query != "" {
		q := a.add(f.Query)
		conds = append(conds, "(t.customer_ref ILIKE "+q+" || '%' OR t.conversation_id ILIKE "+q+" || '%' OR t.id = "+q+")")
	}
	if f.State != "" {
		conds = append(conds, "t.state = "+a.add(f.State))
	}
	if f.Action != "" {
		conds = append(conds, "EXISTS (SELECT 1 FROM task_actions ta WHERE ta.task_id = t.id AND ta.action = "+a.add(f.Action)+")")
	}
	switch f.Need {
	case "":
	case "unverified":
		conds = append(conds, needRanks[f.Need], "t.unverified_count > 0")
	case "approval":
		conds = append(conds, needRanks[f.Need], "t.awaiting_approval_count > 0")
	case "paused":
		conds = append(conds, needRanks[f.Need], "t.state = 'paused'")
	case "handoff":
		conds = append(conds, needRanks[f.Need], "t.handoffs_waiting > 0")
	case "person":
		conds = append(conds, needRanks[f.Need])
	case "mine":
		conds = append(conds, "t.id IN (SELECT task_id FROM mine)")
	default:
		conds = append(conds, "false")
	}
	return strings.Join(conds, " AND ")
}

// TaskList returns one page of the task list, tasks that need a person
// first (a result to check before anything else, then a card to approve, a
// pause, a hand-off nobody took), then active ones, then ended ones; newest
// change first within each. Keyset paging on the tasks_list index: the
// rest of the cursor's rank, then the ranks after it.
func (s *Store) TaskList(ctx context.Context, f TaskListFilter) ([]TaskListRow, error) {
	if f.Limit <= 0 || f.Limit > 200 {
		f.Limit = 50
	}
	a := sqlArgs{f.UserID, f.Now}
	where := taskListWhere(f, &a)
	if f.After == nil {
		limit := a.add(f.Limit)
		return s.taskListPage(ctx, taskListMine+`
		SELECT `+taskListColumns+` FROM `+taskListFrom+` WHERE `+where+`
		ORDER BY t.list_rank, t.updated_at DESC, t.id DESC LIMIT `+limit, a)
	}
	rank, at, id, limit := a.add(f.After.Rank), a.add(f.After.UpdatedAt), a.add(f.After.ID), a.add(f.Limit)
	return s.taskListPage(ctx, taskListMine+`
		SELECT * FROM (
			(SELECT `+taskListColumns+` FROM `+taskListFrom+`
			 WHERE `+where+` AND t.list_rank = `+rank+`::smallint AND (t.updated_at, t.id) < (`+at+`::timestamptz, `+id+`::text)
			 ORDER BY t.updated_at DESC, t.id DESC LIMIT `+limit+`)
			UNION ALL
			(SELECT `+taskListColumns+` FROM `+taskListFrom+` WHERE `+where+` AND t.list_rank > `+rank+`::smallint
			 ORDER BY t.list_rank, t.updated_at DESC, t.id DESC LIMIT `+limit+`)
		) page ORDER BY rank, updated_at DESC, id DESC LIMIT `+limit, a)
}

func (s *Store) taskListPage(ctx context.Context, q string, a sqlArgs) ([]TaskListRow, error) {
	rows, _ := s.pool.Query(ctx, q, a...)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[TaskListRow])
	if err != nil {
		return nil, fmt.Errorf("store.TaskList: %w", err)
	}
	return out, nil
}

// taskListCell is how many tasks share an action ("" for every task), a
// state and which of the three needs they have: the unit the list's
// counts are sums of.
type taskListCell struct {
	Action     string `db:"action"`
	State      string `db:"state"`
	Unverified bool   `db:"unverified"`
	Approval   bool   `db:"approval"`
	Handoff    bool   `db:"handoff"`
	Tasks      int64  `db:"tasks"`
}

// rank is the list's rank of the cell's tasks, as tasks.list_rank.
func (c taskListCell) rank() int32 {
	switch {
	case c.Unverified:
		return 0
	case c.Approval || c.Handoff || c.State == "paused":
		return 1
	case c.State == "active":
		return 2
	}
	return 3
}

// has says whether the cell's tasks have the need ("" any).
func (c taskListCell) has(need string) bool {
	switch need {
	case "":
		return true
	case "person":
		return c.rank() <= 1
	case "unverified":
		return c.Unverified
	case "approval":
		return c.Approval
	case "paused":
		return c.State == "paused"
	case "handoff":
		return c.Handoff
	}
	return false
}

// taskListCells returns the stored cells summed over their shards: what
// the triggers of migration 00022 keep, read in a time that does not grow
// with the number of tasks.
func (s *Store) taskListCells(ctx context.Context) ([]taskListCell, error) {
	rows, _ := s.pool.Query(ctx, `
		SELECT action, state, unverified, approval, handoff, sum(tasks)::bigint AS tasks FROM task_list_cells
		GROUP BY action, state, unverified, approval, handoff HAVING sum(tasks) <> 0`)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[taskListCell])
	if err != nil {
		return nil, fmt.Errorf("store.taskListCells: %w", err)
	}
	return out, nil
}

// searchCells counts the cells of the tasks a search finds, from their
// rows: it reads those tasks only.
func (s *Store) searchCells(ctx context.Context, query string) ([]taskListCell, error) {
	a := sqlArgs{}
	where := taskListWhere(TaskListFilter{Query: query}, &a)
	rows, _ := s.pool.Query(ctx, `
		SELECT x.action, t.state, t.unverified_count > 0 AS unverified, t.awaiting_approval_count > 0 AS approval,
			t.handoffs_waiting > 0 AS handoff, count(*) AS tasks
		FROM tasks t CROSS JOIN LATERAL (SELECT '' AS action UNION ALL SELECT ta.action FROM task_actions ta WHERE ta.task_id = t.id) x
		WHERE `+where+`
		GROUP BY 1, 2, 3, 4, 5`, a...)
	out, err := pgx.CollectRows(rows, pgx.RowToStructByName[taskListCell])
	if err != nil {
		return nil, fmt.Errorf("store.TaskListCounts: search: %w", err)
	}
	return out, nil
}

// TaskListCounts counts the task list: the filtered total and the rows
// before the cursor, and per filter under the search alone. Without a
// search the counts are sums of the stored cells; with one, of the cells
// of the tasks it finds. "Mine" and the rows of the cursor's own rank
// ahead of it are counted from the rows.
func (s *Store) TaskListCounts(ctx context.Context, f TaskListFilter) (TaskListCounts, error) {
	c := TaskListCounts{Actions: map[string]int64{}}
	var cells []taskListCell
	var err error
	if f.Query == "" {
		cells, err = s.taskListCells(ctx)
	} else {
		cells, err = s.searchCells(ctx, f.Query)
	}
	if err != nil {
		return c, err
	}
	for _, x := range cells {
		if x.Action != "" {
			c.Actions[x.Action] += x.Tasks
			continue
		}
		c.All += x.Tasks
		for need, n := range map[string]*int64{"person": &c.NeedsPerson, "unverified": &c.Unverified,
			"approval": &c.Approval, "paused": &c.Paused, "handoff": &c.Handoff} {
			if x.has(need) {
				*n += x.Tasks
			}
		}
		switch x.State {
		case "active":
			c.Active += x.Tasks
		case "paused":
			c.PausedState += x.Tasks
		case "cancelled":
			c.Cancelled += x.Tasks
		case "closed":
			c.Closed += x.Tasks
		}
	}
	if c.Mine, err = s.countTasks(ctx, TaskListFilter{Query: f.Query, Need: "mine", UserID: f.UserID, Now: f.Now}, ""); err != nil {
		return c, err
	}
	if f.Need == "mine" {
		if c.Total, err = s.countTasks(ctx, f, ""); err != nil {
			return c, err
		}
		if f.After != nil {
			c.Before, err = s.countTasks(ctx, f, "NOT")
		}
		return c, err
	}
	for _, x := range cells {
		if x.Action != f.Action || (f.State != "" && x.State != f.State) || !x.has(f.Need) {
			continue
		}
		c.Total += x.Tasks
		if f.After != nil && x.rank() < f.After.Rank {
			c.Before += x.Tasks
		}
	}
	if f.After != nil {
		n, err := s.countTasks(ctx, f, "ahead")
		c.Before += n
		return c, err
	}
	return c, nil
}

// countTasks counts the filtered tasks: all of them (part ""), those not
// after the cursor ("NOT"), or those of the cursor's rank not after it
// ("ahead"), the cursor's row included.
func (s *Store) countTasks(ctx context.Context, f TaskListFilter, part string) (int64, error) {
	a := sqlArgs{f.UserID, f.Now}
	where := taskListWhere(f, &a)
	if part != "" {
		rank, at, id := a.add(f.After.Rank), a.add(f.After.UpdatedAt), a.add(f.After.ID)
		if part == "ahead" {
			where += " AND t.list_rank = " + rank + "::smallint AND (t.updated_at, t.id) >= (" + at + "::timestamptz, " + id + "::text)"
		} else {
			where += " AND NOT (t.list_rank > " + rank + "::smallint OR (t.list_rank = " + rank + "::smallint AND (t.updated_at, t.id) < (" + at + "::timestamptz, " + id + "::text)))"
		}
	}
	var n int64
	if err := s.pool.QueryRow(ctx, taskListMine+` SELECT count(*) FROM tasks t WHERE `+where, a...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store.TaskListCounts: %w", err)
	}
	return n, nil
}
