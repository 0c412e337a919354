package model

import (
	"encoding/base64"
	"encoding/json"
	"time"
)

// Limits on list sizes shared by both APIs.
const (
	DefaultPageSize = 30
	MaxPageSize     = 100
	// MaxPageOffset is how many rows a numbered page may skip (page
	// number × size, less one page): the skip is an index walk whose cost
	// grows with it, so it is bounded (~25 ms at the bound); keyset
	// cursors (GraphQL after/before, /v2 links.next) reach any depth at the
	// cost of page 1.
	MaxPageOffset = 100_000
)

// Cursor is a keyset position: the sort key of a row (as text) and its id,
// bound to the ordering it was taken from so a cursor from another ordering
// is refused rather than silently misapplied.
type Cursor struct {
	Order string  `json:"o"`
	Key   *string `json:"k"`
	ID    string  `json:"i"`
}

// Encode returns the opaque form handed to clients.
func (c Cursor) Encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor parses an opaque cursor taken with the given ordering.
func DecodeCursor(s, order string) (*Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	var c Cursor
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.ID == "" {
		return nil, Errorf(EINVALID, "cursor %q is not valid", s)
	}
	if c.Order != order {
		return nil, Errorf(EINVALID, "cursor %q was taken with another ordering", s)
	}
	return &c, nil
}

// PageRequest says which slice of an ordered list to read. Keyset
// (After/Before, FromEnd for `last`) and numbered pages (Offset) are
// exclusive; Limit is always set.
type PageRequest struct {
	Order   Order
	Limit   int
	After   *Cursor
	Before  *Cursor
	FromEnd bool
	Offset  int
}

// Order is an allow-listed sort field and a direction.
type Order struct {
	Field string // e.g. "created_at", "pod_eta_at"
	Desc  bool
}

// Name identifies the ordering inside cursors.
func (o Order) Name() string {
	if o.Desc {
		return "-" + o.Field
	}
	return o.Field
}

// Page is one slice of a list, in list order, with the sort key of each row
// so callers can build cursors.
type Page[T any] struct {
	Items       []T
	Keys        []*string
	HasNext     bool
	HasPrevious bool
}

// Cursor returns the cursor of row i.
func (p *Page[T]) Cursor(i int, o Order, id string) Cursor {
	return Cursor{Order: o.Name(), Key: p.Keys[i], ID: id}
}

// ShipmentFilter narrows a shipment list. Zero values mean "no filter".
type ShipmentFilter struct {
	IDs                []string
	Search             string // bill of lading, normalized number, reference or container number
	Number             string // the tracked number (bill of lading / normalized number) exactly
	ShippingLineScacs  []string
	PortOfDischargeIDs []string
	PodTerminalIDs     []string
	EtaFrom, EtaTo     *time.Time
	Tags               []string // all of these tags
	TrackingStopped    *bool
}

// ContainerFilter narrows a container list.
type ContainerFilter struct {
	IDs                []string
	ShipmentIDs        []string
	Statuses           []ContainerStatus
	PodTerminalIDs     []string
	LastFreeDayFrom    *time.Time
	LastFreeDayTo      *time.Time
	AvailableForPickup *bool
	HasHolds           *bool
	Number             string
}

// DocumentFilter narrows a document list.
type DocumentFilter struct {
	IDs           []string
	Filename      string   // full-text match on the file name
	Reference     string   // a reference token matched against linked shipments and containers
	DocumentTypes []string // any of these types
}

// CustomFieldDefinitionFilter narrows a definition list.
type CustomFieldDefinitionFilter struct {
	EntityType  *CustomFieldEntityType
	DataType    *CustomFieldDataType
	DisplayName string // prefix match, case-insensitive
}
