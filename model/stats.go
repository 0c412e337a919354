package model

import "io"

// Group is one group of a grouped count (containerStats, shipmentStats):
// the values of the keys it was grouped by (nil for a key not grouped by,
// or a value not known) and how many records it holds. The records its
// keys name are attached by the resolver (Rel), as a record's
// relationships are by its load plan.
type Group struct {
	Status            *ContainerStatus   `db:"status"`
	PodTerminalID     *string            `db:"pod_terminal_id"`
	ShippingLineScac  *string            `db:"shipping_line_scac"`
	PortOfDischargeID *string            `db:"port_of_discharge_id"`
	LastFreeDay       *LastFreeDayBucket `db:"last_free_day"`
	EtaWeek           *string            `db:"eta_week"`
	Count             int                `db:"n"`
	Rel               GroupRel           `db:"-"`
}

// GroupRel holds the records a group's keys name.
type GroupRel struct {
	PodTerminal     *Terminal
	PortOfDischarge *Port
	ShippingLine    *ShippingLine
}

func (g *Group) PodTerminal() *Terminal      { return g.Rel.PodTerminal }
func (g *Group) PortOfDischarge() *Port      { return g.Rel.PortOfDischarge }
func (g *Group) ShippingLine() *ShippingLine { return g.Rel.ShippingLine }

// MaxGroupKeys is the most keys one grouped count may group by: each key
// multiplies the groups (and the statement's work).
const MaxGroupKeys = 3

// MaxGroups bounds the groups of one grouped count.
const MaxGroups = 10000

// LastFreeDayBuckets are where a last free day falls against today.
var LastFreeDayBuckets = newEnumSet("LastFreeDayBucket", "overdue", "today", "next_3_days", "later", "unknown")

type LastFreeDayBucket string

func (e LastFreeDayBucket) MarshalGQL(w io.Writer) { LastFreeDayBuckets.marshal(w, string(e)) }
func (e *LastFreeDayBucket) UnmarshalGQL(v any) error {
	s, err := LastFreeDayBuckets.unmarshal(v)
	*e = LastFreeDayBucket(s)
	return err
}
