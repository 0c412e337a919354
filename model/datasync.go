package model

import "time"

// SyncDestination is one destination of an account's data sync: a
// PostgreSQL database or an object-store prefix the account's tracking
// data is exported to. Its URL is shown without credentials; the URL with
// them is stored sealed and never shown.
type SyncDestination struct {
	AccountID string
	ID        string
	Name      string
	// Kind is postgres or object_store.
	Kind string
	// URL is the destination's URL without its credentials.
	URL       string
	Tables    []string
	Paused    bool
	Failures  int
	CreatedAt time.Time
	UpdatedAt time.Time
	// Status is where each table stands (filled by reads that show it).
	Status []SyncTableStatus
}

// SyncTableStatus is where one table of a destination stands.
type SyncTableStatus struct {
	Table string
	// Phase is backfill (copying the account's rows) or follow
	// (applying the change log).
	Phase string
	// BackfillHead is the log position the copy started at (-1: the
	// copy has not started).
	BackfillHead  int64
	BackfillAfter string
	// Pos is the last log position applied (follow).
	Pos int64
	// Lag is the changes of the account's log not yet applied.
	Lag         int64
	RowsWritten int64
	LastError   string
	LastErrorAt time.Time
	SyncedAt    time.Time
	UpdatedAt   time.Time
}

// SyncDestinationInput is a new destination.
type SyncDestinationInput struct {
	Name   string
	Kind   string
	URL    string
	Tables []string
}

// Position is Pos (GraphQL's position).
func (s SyncTableStatus) Position() int64 { return s.Pos }

// LastErrorText is LastError, nil when there is none.
func (s SyncTableStatus) LastErrorText() *string {
	if s.LastError == "" {
		return nil
	}
	return &s.LastError
}

// LastErrorTime is LastErrorAt, nil when there is none.
func (s SyncTableStatus) LastErrorTime() *time.Time { return timeOrNil(s.LastErrorAt) }

// LastSyncedTime is SyncedAt, nil before the first write.
func (s SyncTableStatus) LastSyncedTime() *time.Time { return timeOrNil(s.SyncedAt) }

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
