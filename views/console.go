package views

import "strconv"

// This file holds the view models of the support agent's console: the
// approval queue, a card being decided, the task list and the task view.

// StateBadgeView is an invocation's or task's state as one badge: the words
// of seed 003 and a tone (ok, warn, bad, info, idle) that repeats them.
type StateBadgeView struct {
	Label string
	Tone  string
}

// QuoteView is a dry-run quote as the customer would see it.
type QuoteView struct {
	Title        string
	Lines        []QuoteLineView
	Consequences []string
	Amount       string
	Effective    string
}

// QuoteLineView is one line of a quote; Changed marks a line an edit changed.
type QuoteLineView struct {
	Label    string
	From     string
	To       string
	Emphasis bool
	Changed  bool
}

// ArgView is one argument, flattened ("address.city") and shown as text.
type ArgView struct {
	Name  string
	Value string
}

// QueueFilterView holds the queue's filter form as the user typed it.
type QueueFilterView struct {
	System    string
	Action    string
	Customer  string
	MinAmount string
	MaxAmount string
	Age       string
	Mine      bool
}

// QueueView is the approval queue page.
type QueueView struct {
	Filter  QueueFilterView
	Errors  FieldErrors
	Systems []string
	Actions []string
	Cards   []QueueCard
	// NextURL continues after the last card (keyset); empty on the last page.
	NextURL string
	// FirstURL goes back to the first page when this is not it.
	FirstURL string
	// BulkIDs are the cards on this page that are low-risk enough for bulk approval.
	BulkIDs []string
}

// QueueCard is one invocation awaiting approval, with what the approver
// needs and no more.
type QueueCard struct {
	ID               string
	TaskID           string
	System           string
	Action           string
	ActionTitle      string
	Quote            QuoteView
	Args             []ArgView
	Summary          string
	SummaryDisagrees bool
	CustomerRef      string
	ConversationID   string
	BudgetLeft       int
	WriteBudget      int
	InflightLimit    int
	Inflight         int
	Limits           []string
	DeadlineISO      string
	// NowISO is the server's time when the page was made; the countdown
	// script counts from it, whatever the browser's clock says.
	NowISO         string
	TimeLeft       string
	Urgent         bool
	HolderName     string
	HeldByMe       bool
	HoldUntil      string
	FirstApprovers []string
	NeedsSecond    bool
	Version        int32
	ArgsHash       string
	LowRisk        bool
	Edited         bool
	State          StateBadgeView
}

// DecideView is the page of one card opened for deciding.
type DecideView struct {
	Card QueueCard
	// Decidable is false once the card is decided (or expired).
	Decidable bool
	Outcome   string
	// OutcomeBad marks an Outcome that says a decision was refused.
	OutcomeBad bool
	Edit       []FormField
	Diff       *DiffView
	Reasons    []string
	Errors     FieldErrors
	Reason     string
	Other      string
	Question   string
}

// FormField is one input of a form generated from an action's schema.
type FormField struct {
	// Name is the form name ("arg.amount_cents", "arg.address.city").
	Name        string
	ID          string
	Label       string
	Description string
	// Kind is "select", "number", "text" or "fieldset".
	Kind     string
	Options  []string
	Value    string
	Required bool
	Min      string
	Max      string
	Children []FormField
}

// DiffView compares an edit with the proposal: arguments and quotes.
type DiffView struct {
	Args   []ArgChange
	Before QuoteView
	After  QuoteView
}

// ArgChange is one argument an edit changed.
type ArgChange struct {
	Name string
	From string
	To   string
}

// BulkConfirmView is the confirmation step of a bulk approval.
type BulkConfirmView struct {
	Cards []QueueCard
}

// TaskListView is the agents' list of tasks.
type TaskListView struct {
	Query  string
	State  string
	States []string
	Tasks  []TaskRow
}

// TaskRow is one task in the list.
type TaskRow struct {
	ID             string
	CustomerRef    string
	ConversationID string
	State          StateBadgeView
	BudgetLeft     int
	WriteBudget    int
	Updated        string
}

// TaskView is one task: where it stands, its controls, its invocations and
// its timeline.
type TaskView struct {
	Live          TaskLiveView
	IsAdmin       bool
	GlobalStopped bool
	Inspect       *InspectView
	// Blocks are the targets a policy refusal closed in this task;
	// CanLiftBlocks is true for the roles that may lift them.
	Blocks        []BlockRow
	CanLiftBlocks bool
	// Lift is a refused lift, re-shown with its reason and errors.
	Lift LiftBlockForm
}

// BlockRow is a target a policy refusal blocked in a task.
type BlockRow struct {
	System   string
	TargetID string
	Action   string
	Code     string
	Message  string
	Since    string
}

// LiftBlockForm is the form that lifts one block.
type LiftBlockForm struct {
	System   string
	TargetID string
	Reason   string
	Errors   FieldErrors
}

// For reports whether the form was sent for block b.
func (f LiftBlockForm) For(b BlockRow) bool { return f.System == b.System && f.TargetID == b.TargetID }

// TaskLiveView is the part of the task page that updates live.
type TaskLiveView struct {
	ID             string
	CustomerRef    string
	ConversationID string
	State          StateBadgeView
	Version        int32
	Notice         string
	BudgetLeft     int
	WriteBudget    int
	WritesUsed     int
	InflightLimit  int
	RatePerMinute  int
	ExpiresAt      string
	CanPause       bool
	CanResume      bool
	CanCancel      bool
	Invocations    []InvocationRow
	Timeline       []TimelineRow
	// Mark identifies this state of the task; the live poll sends it back
	// and gets 204 No Content while nothing changed.
	Mark string
}

// InvocationRow is one invocation in the task view.
type InvocationRow struct {
	ID         string
	Title      string
	Action     string
	State      StateBadgeView
	Why        string
	Amount     string
	Reference  string
	Unverified bool
	CanReverse bool
	Pending    bool
}

// InspectView is the read-only record of an original call.
type InspectView struct {
	ID             string
	Action         string
	State          StateBadgeView
	IdempotencyKey string
	Proposed       string
	ApprovedArgs   string
	Effective      string
	Created        string
	ApprovedAt     string
	Permit         string
	Finished       string
	Found          bool
	LedgerState    string
	Effects        []string
	LookupError    string
	Unverified     bool
}

// TimelineRow is one event with its actor.
type TimelineRow struct {
	ID         int64
	At         string
	AtISO      string
	Actor      string
	Action     string
	Invocation string
	Detail     string
}

// HandoffsView lists conversations handed to a person.
type HandoffsView struct {
	Handoffs []HandoffRow
}

// HandoffRow is one hand-off with what the assistant prepared.
type HandoffRow struct {
	ID             int64
	ConversationID string
	TaskID         string
	Intent         string
	At             string
	Summary        string
	Facts          []string
	WouldPropose   string
	TakenBy        string
	TakenByMe      bool
}

func itoaView(n int) string { return strconv.Itoa(n) }
