package model

import "time"

// Change is one committed change as a subscription sees it: what changed,
// never the row itself. Subscribers read the record through the store,
// scoped to their account as every read is. The store makes one of each
// row of its change log; a wake-up of the store's listener carries only
// AccountID.
type Change struct {
	AccountID string `json:"-"`
	// Type is shipment, container, custom_field, custom_field_definition,
	// custom_field_option or document.
	Type string `json:"t"`
	ID   string `json:"id"`
	// Op is INSERT, UPDATE or DELETE.
	Op string `json:"op"`
	// Parent is the container's shipment, the custom field's entity (a
	// shipment or container), the option's definition; "" for the others.
	Parent string `json:"p,omitempty"`
	// Columns are the columns an UPDATE changed.
	Columns []string `json:"c,omitempty"`
	// Was holds the previous values of the columns a subscription filters
	// on (a container's current_status, pod_terminal_id, shipment_id) when
	// the UPDATE changed them.
	Was map[string]*string `json:"was,omitempty"`
	// Log is the change's public log id (0: not from the log).
	Log int64 `json:"l,omitempty"`
	// WAL is a primary WAL position the change's commit is before (0:
	// unknown): re-reads of its record may use a replica that replayed it.
	WAL   uint64    `json:"-"`
	WALAt time.Time `json:"-"` // when WAL was read
}
