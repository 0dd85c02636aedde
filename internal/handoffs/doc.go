// Package handoffs is what people do with an assistant's hand-off: take the
// conversation, resolve it or give it back with a note, send on or discard
// the write the assistant prepared (its draft), and, for a manager, take it
// over from a holder who is away.
//
// It is a client of the control plane: a draft sent on becomes a proposal
// through the control plane's one door (controlplane.Service.Propose),
// routed by the action's policy like any other, and the changes this
// package makes itself are recorded in the same audit trail
// (controlplane.AuditEvent) in the transaction that makes them. Every
// change to a conversation's hand-offs holds that conversation's lock
// (store.Tx.LockHandoffs) first, so two people acting at once are
// serialised and the second is told plainly what happened. The control
// plane knows nothing of this package (internal/depcheck holds that).
package handoffs
