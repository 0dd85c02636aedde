// Package accounts holds the people who use the console: their roles,
// passwords, sign-in with throttling, and the admin's changes to them.
package accounts

// Role is what a user is allowed to do in the console.
type Role string

// The roles, as docs/architecture.md's table of who uses the console names them.
const (
	// Customer confirms or declines what an assistant proposed for them.
	Customer Role = "customer"
	// Agent is a support agent: approves proposals and looks after tasks.
	Agent Role = "agent"
	// Manager reads the metrics and sets each action's policy.
	Manager Role = "manager"
	// Admin manages users, assistants and the global stop switch.
	Admin Role = "admin"
)

// Roles lists every role in the order the console shows them.
var Roles = []Role{Customer, Agent, Manager, Admin}

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool {
	for _, v := range Roles {
		if r == v {
			return true
		}
	}
	return false
}

// Label is the role's name for people.
func (r Role) Label() string {
	switch r {
	case Customer:
		return "Customer"
	case Agent:
		return "Support agent"
	case Manager:
		return "Manager"
	case Admin:
		return "Admin"
	}
	return string(r)
}
