package controlplane

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"countersign/internal/adapter"
	"countersign/internal/apperr"
	"countersign/store"
)

// Task is the durable boundary of one assignment: who, which conversation,
// which actions, and how much writing it may do.
type Task struct {
	ID             string
	AssistantID    string
	CustomerRef    string
	ConversationID string
	// Systems limits the task to these systems; empty means every
	// connected one.
	Systems []string
	// AllowedActions are action names, or "system/action" for one system.
	AllowedActions []string
	WriteBudget    int
	WritesUsed     int
	InflightLimit  int
	RatePerMinute  int
	ExpiresAt      time.Time
	State          TaskState
	Version        int32
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// PausedBy is who paused a paused task (Kind and ID only); zero
	// otherwise.
	PausedBy Actor
}

// PausedByPerson reports whether a person (a console user or the
// customer), not a program, paused the task. Such a pause is lifted only
// by a person. A pause whose author is unknown counts as a person's.
func (t Task) PausedByPerson() bool {
	return t.State == TaskPaused && t.PausedBy.Kind != ActorAssistant && t.PausedBy.Kind != ActorSystem
}

// BudgetLeft is how many more writes the task may attempt.
func (t Task) BudgetLeft() int { return max(t.WriteBudget-t.WritesUsed, 0) }

// TakesProposals reports whether the task accepts a new proposal at now
// (a reversal included): it is active and has not expired, as Propose
// checks first.
func (t Task) TakesProposals(now time.Time) bool {
	return t.State == TaskActive && now.Before(t.ExpiresAt)
}

// Allows reports whether the task may use action on system.
func (t Task) Allows(system, action string) bool {
	if len(t.Systems) > 0 && !slices.Contains(t.Systems, system) {
		return false
	}
	return slices.Contains(t.AllowedActions, action) || slices.Contains(t.AllowedActions, system+"/"+action)
}

// TaskFromRow is a task as the database keeps it, in the control plane's
// terms; the console's lists (internal/lists) read tasks through it too.
func TaskFromRow(r store.Task) Task {
	t := Task{ID: r.ID, CustomerRef: r.CustomerRef, ConversationID: r.ConversationID, Systems: r.Systems,
		AllowedActions: r.AllowedActions, WriteBudget: int(r.WriteBudget), WritesUsed: int(r.WritesUsed),
		InflightLimit: int(r.InflightLimit), RatePerMinute: int(r.RatePerMinute), ExpiresAt: r.ExpiresAt,
		State: TaskState(r.State), Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.AssistantID != nil {
		t.AssistantID = *r.AssistantID
	}
	if r.PausedByKind != nil {
		t.PausedBy.Kind = ActorKind(*r.PausedByKind)
	}
	if r.PausedByID != nil {
		t.PausedBy.ID = *r.PausedByID
	}
	return t
}

// NewTask is a request to open a task.
type NewTask struct {
	AssistantID    string
	CustomerRef    string
	ConversationID string
	Systems        []string
	AllowedActions []string
	WriteBudget    int
	InflightLimit  int
	RatePerMinute  int
	ExpiresAt      time.Time
	// Vouch is required on a task of an assistant (AssistantID set).
	Vouch Vouch
}

// ConversationNotYours is what an assistant is told about a conversation
// id another assistant already uses: conversation ids belong to the
// assistant that used them first.
const ConversationNotYours = "not a conversation of yours: use your own conversation's id"

// CreateTask opens a task, or fails with apperr.Invalid naming each bad
// field. A task of an assistant claims its conversation id for that
// assistant; one another assistant already uses is refused. A task of an
// assistant needs in.Vouch (Forbidden, code customer_not_vouched,
// otherwise, or when its assertion was spent already).
func (s *Service) CreateTask(ctx context.Context, actor Actor, in NewTask) (Task, error) {
	now := s.now()
	fields := map[string]string{}
	if strings.TrimSpace(in.CustomerRef) == "" {
		fields["customer_ref"] = "required: the customer this task acts for (their e-mail)"
	}
	if strings.TrimSpace(in.ConversationID) == "" {
		fields["conversation_id"] = "required: your conversation's id"
	}
	// Read tools work in every task: naming one among the allowed actions
	// is accepted and changes nothing, but it does not count as the write
	// a task is opened for.
	writes := 0
	for _, a := range in.AllowedActions {
		switch {
		case s.registry.OffersAction(a):
			writes++
		case s.registry.OffersReadTool(a):
		default:
			fields["allowed_actions"] = fmt.Sprintf("%q is not an action of any connected system", a)
		}
	}
	if _, bad := fields["allowed_actions"]; !bad && writes == 0 {
		fields["allowed_actions"] = "list at least one write action the task may propose (read tools work in every task and need not be listed)"
	}
	for _, sys := range in.Systems {
		if _, err := s.registry.System(sys); err != nil {
			fields["systems"] = fmt.Sprintf("%q is not a connected system", sys)
		}
	}
	switch {
	case in.WriteBudget < 0 || in.WriteBudget > 1000:
		fields["write_budget"] = "must be between 0 and 1000"
	case in.InflightLimit < 1 || in.InflightLimit > 100:
		fields["inflight_limit"] = "must be between 1 and 100"
	case in.RatePerMinute < 1 || in.RatePerMinute > 10000:
		fields["rate_per_minute"] = "must be between 1 and 10000"
	}
	if !in.ExpiresAt.After(now) {
		fields["expires_at"] = "must be in the future"
	} else if in.ExpiresAt.After(now.Add(30 * 24 * time.Hour)) {
		fields["expires_at"] = "must be within 30 days"
	}
	if len(fields) > 0 {
		return Task{}, apperr.InvalidFields(fields)
	}
	var out Task
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		row := store.Task{ID: newID("tsk"), CustomerRef: adapter.NormaliseCustomerRef(in.CustomerRef), ConversationID: strings.TrimSpace(in.ConversationID),
			Systems: nonNil(in.Systems), AllowedActions: in.AllowedActions, WriteBudget: int32(in.WriteBudget),
			InflightLimit: int32(in.InflightLimit), RatePerMinute: int32(in.RatePerMinute), ExpiresAt: in.ExpiresAt,
			State: string(TaskActive), CreatedAt: now}
		if in.AssistantID != "" {
			if err := spendVouch(ctx, tx, in, row.CustomerRef, now); err != nil {
				return err
			}
			row.AssistantID = &in.AssistantID
			vouched := string(in.Vouch.Kind)
			row.Vouched = &vouched
			owner, err := tx.ClaimConversation(ctx, row.ConversationID, in.AssistantID, now)
			if err != nil {
				return err
			}
			if owner != in.AssistantID {
				return apperr.InvalidFields(map[string]string{"conversation_id": ConversationNotYours})
			}
		}
		created, err := tx.InsertTask(ctx, row)
		if err != nil {
			return err
		}
		out = TaskFromRow(created)
		data := map[string]any{
			"customer_ref": out.CustomerRef, "conversation_id": out.ConversationID, "allowed_actions": out.AllowedActions,
			"write_budget": out.WriteBudget, "inflight_limit": out.InflightLimit, "rate_per_minute": out.RatePerMinute}
		if in.AssistantID != "" {
			data["vouched"] = in.Vouch.eventData()
		}
		return s.record(ctx, tx, actor, EventTaskCreated, out.ID, "", data)
	})
	return out, err
}

// principalOf is the customer a task acts for, as an adapter call names
// them.
func (s *Service) principalOf(ctx context.Context, taskID string) (adapter.Principal, error) {
	t, err := s.store.Task(ctx, taskID)
	if err != nil {
		return adapter.Principal{}, err
	}
	return adapter.Principal{CustomerRef: t.CustomerRef}, nil
}

// Task returns a task by id, or apperr.NotFound.
func (s *Service) Task(ctx context.Context, id string) (Task, error) {
	row, err := s.store.Task(ctx, id)
	if err != nil {
		return Task{}, err
	}
	return TaskFromRow(row), nil
}

// TaskVerb is a change of a whole task's state.
type TaskVerb string

// The changes of a task. Who may make which is changeTask's rule.
const (
	// TaskPause stops further dispatch: after it commits no permit is
	// granted. Work already holding a permit finishes and stays visible;
	// approved work without a permit becomes not dispatched; proposals
	// awaiting a person stay pending. Besides the assistant and console
	// users, the task's own customer with a proof may pause it ("Stop
	// this"): a person's pause, so only a console user resumes it.
	TaskPause TaskVerb = "pause"
	// TaskResume lets a paused task dispatch again. It keeps the
	// remaining budget and unresolved calls and replays nothing. A pause
	// made by a person is lifted only by a console user; an assistant may
	// resume only a pause that an assistant made (Forbidden, code
	// paused_by_person, otherwise).
	TaskResume TaskVerb = "resume"
	// TaskCancel ends a task for good. It undoes nothing: approved work
	// that never left becomes not dispatched, and so do its requests that
	// wait for a person (the customer's confirmation or an agent's
	// approval), withdrawn with reason task_cancelled in the same
	// transaction; reversal is its own action.
	TaskCancel TaskVerb = "cancel"
)

// ChangeTask is the one call that pauses, resumes or cancels a task
// (verb), as actor. The change is guarded by expectedVersion, the task's
// version the caller saw (zero means any): a task changed since is a
// conflict. An unknown task is apperr.NotFound.
func (s *Service) ChangeTask(ctx context.Context, actor Actor, taskID string, verb TaskVerb, expectedVersion int32) (Task, error) {
	switch verb {
	case TaskPause:
		return s.changeTask(ctx, actor, taskID, expectedVersion, "pause", TaskPaused, []TaskState{TaskActive}, ReasonTaskPaused)
	case TaskResume:
		return s.changeTask(ctx, actor, taskID, expectedVersion, "resume", TaskActive, []TaskState{TaskPaused}, "")
	case TaskCancel:
		return s.changeTask(ctx, actor, taskID, expectedVersion, "cancel", TaskCancelled, []TaskState{TaskActive, TaskPaused}, ReasonTaskCancelled)
	}
	return Task{}, apperr.New(apperr.Invalid, "A task is paused, resumed or cancelled.")
}

func (s *Service) changeTask(ctx context.Context, actor Actor, taskID string, expectedVersion int32, verb string, to TaskState, from []TaskState, reason NotDispatchedReason) (Task, error) {
	// The customer may stop (pause) their own task — a person's pause, which
	// only a console user lifts — but never resume or cancel it.
	customerStop := actor.Kind == ActorCustomer && to == TaskPaused && actor.Proof != ""
	if (actor.Kind == ActorCustomer && !customerStop) || actor.Kind == ActorPolicy {
		return Task{}, apperr.New(apperr.Forbidden, "Only the assistant or a console user can %s a task.", verb)
	}
	var out Task
	err := s.store.InTx(ctx, func(tx *store.Tx) error {
		if to == TaskCancelled {
			if err := lockWaitingFirst(ctx, tx, taskID); err != nil {
				return err
			}
		}
		// The permit takes this lock too: whichever commits first, the
		// other sees its result.
		current, err := tx.LockTask(ctx, taskID)
		if err != nil {
			return err
		}
		if customerStop {
			if err := customerMayStop(ctx, tx, actor, current); err != nil {
				return err
			}
		}
		out, err = s.changeLockedTask(ctx, tx, actor, current, expectedVersion, verb, to, from, reason)
		return err
	})
	return out, err
}

// changeLockedTask moves current, locked in tx by the caller who
// authorised actor, from one of from to to.
func (s *Service) changeLockedTask(ctx context.Context, tx *store.Tx, actor Actor, current store.Task, expectedVersion int32, verb string, to TaskState, from []TaskState, reason NotDispatchedReason) (Task, error) {
	taskID := current.ID
	if expectedVersion != 0 && current.Version != expectedVersion {
		return Task{}, &apperr.Error{Kind: apperr.Conflict, Code: "stale_version",
			Message: fmt.Sprintf("The task changed since you read it (version %d, now %d).", expectedVersion, current.Version),
			Hint:    "Read the task again and decide on what it says now."}
	}
	if !slices.Contains(from, TaskState(current.State)) {
		return Task{}, &apperr.Error{Kind: apperr.IllegalTransition, Code: "illegal_transition",
			Message: fmt.Sprintf("Cannot %s a task that is %s.", verb, current.State)}
	}
	if to == TaskActive {
		if err := mayResume(actor, TaskFromRow(current)); err != nil {
			return Task{}, err
		}
	}
	row, err := tx.TransitionTask(ctx, taskID, states(from), current.Version, string(to), s.now(), string(actor.Kind), actor.ID)
	if err != nil {
		return Task{}, err
	}
	out := TaskFromRow(row)
	var stopped []string
	if reason != "" {
		if stopped, err = s.stopApproved(ctx, tx, taskID, reason); err != nil {
			return Task{}, err
		}
	}
	data := map[string]any{"from": current.State, "not_dispatched": stopped}
	// A cancelled task ends what it proposed; a paused one keeps its
	// requests waiting for a person, to be decided once it resumes.
	if to == TaskCancelled {
		withdrawn, err := s.withdrawWaiting(ctx, tx, taskID)
		if err != nil {
			return Task{}, err
		}
		data[DataWithdrawnIDs] = withdrawn
	}
	return out, s.record(ctx, tx, actor, to.entered(), taskID, "", data)
}

// mayResume says whether actor may lift the task's pause: a person's pause
// only a console user; an assistant's pause a console user or that same
// assistant. Nothing an assistant holds turns it into a person.
func mayResume(actor Actor, t Task) error {
	if actor.Kind == ActorUser {
		return nil
	}
	if t.PausedByPerson() {
		who := "a person"
		if t.PausedBy.Kind == ActorUser {
			who = "a support agent"
		} else if t.PausedBy.Kind == ActorCustomer {
			who = "the customer"
		}
		return &apperr.Error{Kind: apperr.Forbidden, Code: "paused_by_person",
			Message: "This task was paused by " + who + "; only a person can resume it.",
			Hint:    "Tell the customer the work is on hold and a person will pick it up; do not try to resume it again."}
	}
	if t.PausedBy.Kind == ActorAssistant && actor.Kind == ActorAssistant && actor.ID == t.PausedBy.ID {
		return nil
	}
	return &apperr.Error{Kind: apperr.Forbidden, Code: "paused_by_other",
		Message: "This task was paused by someone else; you cannot resume it.",
		Hint:    "Hand the case to a person."}
}

// SetGlobalStop turns the installation-wide stop switch on or off. While
// it is on no permit is granted anywhere.
func (s *Service) SetGlobalStop(ctx context.Context, actor Actor, stopped bool) error {
	if actor.Kind != ActorUser || actor.Role != "admin" {
		return apperr.New(apperr.Forbidden, "Only an admin can use the global stop switch.")
	}
	return s.store.InTx(ctx, func(tx *store.Tx) error {
		changed, err := tx.SetGlobalStop(ctx, stopped, s.now())
		if err != nil || !changed {
			return err
		}
		action := EventDispatchResumedGlobally
		if stopped {
			action = EventDispatchStoppedGlobally
		}
		return s.record(ctx, tx, actor, action, "", "", nil)
	})
}

// GlobalStopped reports whether the stop switch is on.
func (s *Service) GlobalStopped(ctx context.Context) (bool, error) { return s.store.GlobalStopped(ctx) }

func states[T ~string](in []T) []string {
	out := make([]string, len(in))
	for i, v := range in {
		out[i] = string(v)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
