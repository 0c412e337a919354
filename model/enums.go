package model

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Enumerations hold their API (REST) value, e.g. "open top" or "on_ship".
// GraphQL shows them as UPPER_SNAKE names (OPEN_TOP, ON_SHIP); the mapping
// is derived from the value list so the two can never drift apart.

type enumSet struct {
	name    string
	values  []string
	byGraph map[string]string
	quoted  map[string]string // API value → its GraphQL name as a JSON string
}

func newEnumSet(name string, values ...string) *enumSet {
	s := &enumSet{name: name, values: values, byGraph: map[string]string{}, quoted: map[string]string{}}
	for _, v := range values {
		s.byGraph[graphName(v)] = v
		s.quoted[v] = strconv.Quote(graphName(v))
	}
	return s
}

var graphNames = strings.NewReplacer(" ", "_", "-", "_")

// graphName is v in UPPER_SNAKE case; a capital that follows a lower-case
// letter starts a word (TrackingRequest is TRACKING_REQUEST).
func graphName(v string) string {
	var b strings.Builder
	for i, c := range v {
		if i > 0 && 'A' <= c && c <= 'Z' && 'a' <= v[i-1] && v[i-1] <= 'z' {
			b.WriteByte('_')
		}
		b.WriteRune(c)
	}
	return strings.ToUpper(graphNames.Replace(b.String()))
}

func (s *enumSet) unmarshal(v any) (string, error) {
	str, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string", s.name)
	}
	if val, ok := s.byGraph[str]; ok {
		return val, nil
	}
	return "", fmt.Errorf("%s is not a valid %s", str, s.name)
}

func (s *enumSet) marshal(w io.Writer, v string) {
	q, ok := s.quoted[v]
	if !ok {
		q = strconv.Quote(graphName(v)) // a value the database allows but the list lacks
	}
	_, _ = io.WriteString(w, q)
}

// Values returns the API values of an enumeration, in declared order.
func (s *enumSet) Values() []string { return append([]string(nil), s.values...) }

var (
	ContainerStatuses = newEnumSet("ContainerStatus", "new", "on_ship", "available", "not_available",
		"grounded", "on_rail", "picked_up", "off_dock", "delivered", "dropped", "loaded",
		"empty_returned", "awaiting_inland_transfer")
	EquipmentTypes   = newEnumSet("EquipmentType", "dry", "reefer", "open top", "flat rack", "bulk", "tank")
	EquipmentHeights = newEnumSet("EquipmentHeight", "standard", "high_cube")
	DocumentSources  = newEnumSet("DocumentSource", "upload", "api", "email", "split_document")
	StoppedReasons   = newEnumSet("LineTrackingStoppedReason", "all_containers_terminated",
		"past_arrival_window", "past_full_out_window", "no_updates_at_line", "cancelled_by_user",
		"booking_cancelled")
	HoldStatuses = newEnumSet("HoldStatus", "pending", "hold")
	FeeTypes     = newEnumSet("FeeType", "demurrage", "exam", "extended_dwell_time", "other", "total")
	DataTypes    = newEnumSet("CustomFieldDataType", "short_text", "number", "date", "datetime",
		"boolean", "enum", "enum_multi", "reference")
	EntityTypes = newEnumSet("CustomFieldEntityType", "Shipment", "Container", "TrackingRequest")
	Roles       = newEnumSet("Role", RoleAdmin, RoleMember, RoleViewer)
)

type ContainerStatus string

func (e ContainerStatus) MarshalGQL(w io.Writer) { ContainerStatuses.marshal(w, string(e)) }
func (e *ContainerStatus) UnmarshalGQL(v any) error {
	s, err := ContainerStatuses.unmarshal(v)
	*e = ContainerStatus(s)
	return err
}

type EquipmentType string

func (e EquipmentType) MarshalGQL(w io.Writer) { EquipmentTypes.marshal(w, string(e)) }
func (e *EquipmentType) UnmarshalGQL(v any) error {
	s, err := EquipmentTypes.unmarshal(v)
	*e = EquipmentType(s)
	return err
}

type EquipmentHeight string

func (e EquipmentHeight) MarshalGQL(w io.Writer) { EquipmentHeights.marshal(w, string(e)) }
func (e *EquipmentHeight) UnmarshalGQL(v any) error {
	s, err := EquipmentHeights.unmarshal(v)
	*e = EquipmentHeight(s)
	return err
}

type DocumentSource string

func (e DocumentSource) MarshalGQL(w io.Writer) { DocumentSources.marshal(w, string(e)) }
func (e *DocumentSource) UnmarshalGQL(v any) error {
	s, err := DocumentSources.unmarshal(v)
	*e = DocumentSource(s)
	return err
}

type LineTrackingStoppedReason string

func (e LineTrackingStoppedReason) MarshalGQL(w io.Writer) { StoppedReasons.marshal(w, string(e)) }
func (e *LineTrackingStoppedReason) UnmarshalGQL(v any) error {
	s, err := StoppedReasons.unmarshal(v)
	*e = LineTrackingStoppedReason(s)
	return err
}

type HoldStatus string

func (e HoldStatus) MarshalGQL(w io.Writer) { HoldStatuses.marshal(w, string(e)) }
func (e *HoldStatus) UnmarshalGQL(v any) error {
	s, err := HoldStatuses.unmarshal(v)
	*e = HoldStatus(s)
	return err
}

type FeeType string

func (e FeeType) MarshalGQL(w io.Writer) { FeeTypes.marshal(w, string(e)) }
func (e *FeeType) UnmarshalGQL(v any) error {
	s, err := FeeTypes.unmarshal(v)
	*e = FeeType(s)
	return err
}

type CustomFieldDataType string

func (e CustomFieldDataType) MarshalGQL(w io.Writer) { DataTypes.marshal(w, string(e)) }
func (e *CustomFieldDataType) UnmarshalGQL(v any) error {
	s, err := DataTypes.unmarshal(v)
	*e = CustomFieldDataType(s)
	return err
}

// HasOptions reports whether definitions of this data type own options.
func (e CustomFieldDataType) HasOptions() bool { return e == "enum" || e == "enum_multi" }

type CustomFieldEntityType string

func (e CustomFieldEntityType) MarshalGQL(w io.Writer) { EntityTypes.marshal(w, string(e)) }
func (e *CustomFieldEntityType) UnmarshalGQL(v any) error {
	s, err := EntityTypes.unmarshal(v)
	*e = CustomFieldEntityType(s)
	return err
}

type Role string

func (e Role) MarshalGQL(w io.Writer) { Roles.marshal(w, string(e)) }
func (e *Role) UnmarshalGQL(v any) error {
	s, err := Roles.unmarshal(v)
	*e = Role(s)
	return err
}
