package model

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/lib/pq"
)

// Relations are kept as foreign-key ids (…ID fields); the load plan reads
// the related records and attaches them to Rel (rel.go).

type Account struct {
	ID string `db:"id"`

	// The /v2 attributes, in the order /v2 writes them (jsonapi tags: tools/attrgen).
	CompanyName string `db:"company_name" jsonapi:"company_name"`

	// Not /v2 attributes: keys, relationships' ids and bookkeeping.
	Slug      string    `db:"slug"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

type User struct {
	ID        string `db:"id"`
	AccountID string `db:"account_id"`

	// The /v2 attributes, in the order /v2 writes them (jsonapi tags: tools/attrgen).
	Email     string    `db:"email" jsonapi:"email"`
	FirstName string    `db:"first_name" jsonapi:"first_name"`
	LastName  string    `db:"last_name" jsonapi:"last_name"`
	CreatedAt time.Time `db:"created_at" jsonapi:"created_at"`

	// Not /v2 attributes: keys, relationships' ids and bookkeeping.
	Role      Role      `db:"role"`
	UpdatedAt time.Time `db:"updated_at"`
}

// APIToken is an API key as stored: the hash and display prefix, never the key.
type APIToken struct {
	ID         string     `db:"id"`
	AccountID  string     `db:"account_id"`
	UserID     *string    `db:"user_id"`
	Role       string     `db:"role"`
	Prefix     string     `db:"prefix"`
	Name       string     `db:"name"`
	CreatedAt  time.Time  `db:"created_at"`
	LastUsedAt *time.Time `db:"last_used_at"`
	RevokedAt  *time.Time `db:"revoked_at"`
}

type Port struct {
	ID string `db:"id"`

	// The /v2 attributes, in the order /v2 writes them (jsonapi tags: tools/attrgen).
	Name        string   `db:"name" jsonapi:"name"`
	Code        string   `db:"code" jsonapi:"code"`
	StateAbbr   *string  `db:"state_abbr" jsonapi:"state_abbr"`
	City        *string  `db:"city" jsonapi:"city"`
	CountryCode string   `db:"country_code" jsonapi:"country_code"`
	TimeZone    string   `db:"time_zone" jsonapi:"time_zone"`
	Latitude    *float64 `db:"latitude" jsonapi:"latitude"`
	Longitude   *float64 `db:"longitude" jsonapi:"longitude"`

	// Not /v2 attributes: keys, relationships' ids and bookkeeping.
	CreatedAt time.Time `db:"created_at"`
}

type MetroArea struct {
	ID string `db:"id"`

	// The /v2 attributes, in the order /v2 writes them (jsonapi tags: tools/attrgen).
	Name        string   `db:"name" jsonapi:"name"`
	Code        string   `db:"code" jsonapi:"code"`
	StateAbbr   *string  `db:"state_abbr" jsonapi:"state_abbr"`
	CountryCode string   `db:"country_code" jsonapi:"country_code"`
	TimeZone    string   `db:"time_zone" jsonapi:"time_zone"`
	Latitude    *float64 `db:"latitude" jsonapi:"latitude"`
	Longitude   *float64 `db:"longitude" jsonapi:"longitude"`

	// Not /v2 attributes: keys, relationships' ids and bookkeeping.
	CreatedAt time.Time `db:"created_at"`
}

// Terminal and rail terminal /v2 attributes other than name are optional
// and typed plain (non-nullable) strings by the OpenAPI document: one the
// data lacks is omitted (omitempty), never null, so clients generated from
// the document accept the response.
type Terminal struct {
	ID string `db:"id"`

	// The /v2 attributes, in the order /v2 writes them (jsonapi tags: tools/attrgen).
	Name            string  `db:"name" jsonapi:"name"`
	Nickname        *string `db:"nickname" jsonapi:"nickname,omitempty"`
	FirmsCode       *string `db:"firms_code" jsonapi:"firms_code,omitempty"`
	SmdgCode        *string `db:"smdg_code" jsonapi:"smdg_code,omitempty"`
	BicFacilityCode *string `db:"bic_facility_code" jsonapi:"bic_facility_code,omitempty"`
	Street          *string `db:"street" jsonapi:"street,omitempty"`
	City            *string `db:"city" jsonapi:"city,omitempty"`
	State           *string `db:"state" jsonapi:"state,omitempty"`
	StateAbbr       *string `db:"state_abbr" jsonapi:"state_abbr,omitempty"`
	Zip             *string `db:"zip" jsonapi:"zip,omitempty"`
	Country         *string `db:"country" jsonapi:"country,omitempty"`

	// Not /v2 attributes: keys, relationships' ids and bookkeeping.
	PortID    string    `db:"port_id"`
	CreatedAt time.Time `db:"created_at"`

	Rel TerminalRel `db:"-"` // relationships attached by the load plan
}

type RailTerminal struct {
	ID string `db:"id"`

	// The /v2 attributes, in the order /v2 writes them (jsonapi tags: tools/attrgen).
	Name      string  `db:"name" jsonapi:"name"`
	Nickname  *string `db:"nickname" jsonapi:"nickname,omitempty"`
	FirmsCode *string `db:"firms_code" jsonapi:"firms_code,omitempty"`

	// Not /v2 attributes: keys, relationships' ids and bookkeeping.
	PortID      *string   `db:"port_id"`
	MetroAreaID *string   `db:"metro_area_id"`
	CreatedAt   time.Time `db:"created_at"`

	Rel RailTerminalRel `db:"-"` // relationships attached by the load plan
}

type ShippingLine struct {
	ID string `db:"id"`

	// The /v2 attributes, in the order /v2 writes them (jsonapi tags: tools/attrgen).
	Scac                           string         `db:"scac" jsonapi:"scac"`
	Name                           string         `db:"name" jsonapi:"name"`
	AlternativeScacs               pq.StringArray `db:"alternative_scacs" jsonapi:"alternative_scacs,nonnull"`
	ShortName                      string         `db:"short_name" jsonapi:"short_name"`
	BillOfLadingTrackingSupport    bool           `db:"bill_of_lading_tracking_support" jsonapi:"bill_of_lading_tracking_support"`
	BookingNumberTrackingSupport   bool           `db:"booking_number_tracking_support" jsonapi:"booking_number_tracking_support"`
	ContainerNumberTrackingSupport bool           `db:"container_number_tracking_support" jsonapi:"container_number_tracking_support"`

	// Not /v2 attributes: keys, relationships' ids and bookkeeping.
	BillOfLadingPrefix *string   `db:"bill_of_lading_prefix"`
	CreatedAt          time.Time `db:"created_at"`
}

type Shipment struct {
	ID        string `db:"id"`
	AccountID string `db:"account_id"`

	// The /v2 attributes, in the order /v2 writes them (jsonapi tags: tools/attrgen).
	BillOfLadingNumber          string                     `db:"bill_of_lading_number" jsonapi:"bill_of_lading_number"`
	NormalizedNumber            string                     `db:"normalized_number" jsonapi:"normalized_number"`
	RefNumbers                  pq.StringArray             `db:"ref_numbers" jsonapi:"ref_numbers"`
	CreatedAt                   time.Time                  `db:"created_at" jsonapi:"created_at"`
	Tags                        pq.StringArray             `db:"tags" jsonapi:"tags,nonnull"`
	PortOfLadingLocode          *string                    `db:"port_of_lading_locode" jsonapi:"port_of_lading_locode"`
	PortOfLadingName            *string                    `db:"port_of_lading_name" jsonapi:"port_of_lading_name"`
	PortOfDischargeLocode       *string                    `db:"port_of_discharge_locode" jsonapi:"port_of_discharge_locode"`
	PortOfDischargeName         *string                    `db:"port_of_discharge_name" jsonapi:"port_of_discharge_name"`
	DestinationLocode           *string                    `db:"destination_locode" jsonapi:"destination_locode"`
	DestinationName             *string                    `db:"destination_name" jsonapi:"destination_name"`
	ShippingLineScac            string                     `db:"shipping_line_scac" jsonapi:"shipping_line_scac"`
	ShippingLineName            string                     `db:"shipping_line_name" jsonapi:"shipping_line_name"`
	ShippingLineShortName       string                     `db:"shipping_line_short_name" jsonapi:"shipping_line_short_name"`
	CustomerName                *string                    `db:"customer_name" jsonapi:"customer_name"`
	PodVesselName               *string                    `db:"pod_vessel_name" jsonapi:"pod_vessel_name"`
	PodVesselImo                *string                    `db:"pod_vessel_imo" jsonapi:"pod_vessel_imo"`
	PodVoyageNumber             *string                    `db:"pod_voyage_number" jsonapi:"pod_voyage_number"`
	PolEtdAt                    *time.Time                 `db:"pol_etd_at" jsonapi:"pol_etd_at"`
	PolAtdAt                    *time.Time                 `db:"pol_atd_at" jsonapi:"pol_atd_at"`
	PodEtaAt                    *time.Time                 `db:"pod_eta_at" jsonapi:"pod_eta_at"`
	PodOriginalEtaAt            *time.Time                 `db:"pod_original_eta_at" jsonapi:"pod_original_eta_at"`
	PodAtaAt                    *time.Time                 `db:"pod_ata_at" jsonapi:"pod_ata_at"`
	DestinationEtaAt            *time.Time                 `db:"destination_eta_at" jsonapi:"destination_eta_at"`
	DestinationAtaAt            *time.Time                 `db:"destination_ata_at" jsonapi:"destination_ata_at"`
	PolTimezone                 *string                    `db:"pol_timezone" jsonapi:"pol_timezone"`
	PodTimezone                 *string                    `db:"pod_timezone" jsonapi:"pod_timezone"`
	DestinationTimezone         *string                    `db:"destination_timezone" jsonapi:"destination_timezone"`
	LineTrackingLastAttemptedAt *time.Time                 `db:"line_tracking_last_attempted_at" jsonapi:"line_tracking_last_attempted_at"`
	LineTrackingLastSucceededAt *time.Time                 `db:"line_tracking_last_succeeded_at" jsonapi:"line_tracking_last_succeeded_at"`
	LineTrackingStoppedAt       *time.Time                 `db:"line_tracking_stopped_at" jsonapi:"line_tracking_stopped_at"`
	LineTrackingStoppedReason   *LineTrackingStoppedReason `db:"line_tracking_stopped_reason" jsonapi:"line_tracking_stopped_reason"`

	// Not /v2 attributes: keys, relationships' ids and bookkeeping.
	CustomerID                  *string   `db:"customer_id"` // a party (migration 00019)
	ShippingLineID              *string   `db:"shipping_line_id"`
	PortOfLadingID              *string   `db:"port_of_lading_id"`
	PortOfDischargeID           *string   `db:"port_of_discharge_id"`
	DestinationPortID           *string   `db:"destination_port_id"`
	DestinationMetroAreaID      *string   `db:"destination_metro_area_id"`
	PodTerminalID               *string   `db:"pod_terminal_id"`
	DestinationTerminalID       *string   `db:"destination_terminal_id"`
	DestinationRailTerminalID   *string   `db:"destination_rail_terminal_id"`
	LineTrackingStoppedByUserID *string   `db:"line_tracking_stopped_by_user_id"`
	UpdatedAt                   time.Time `db:"updated_at"`

	// The containers' ids (linkage, in their order), when the read
	// gathered them in the shipment's own statement: a column a read
	// selects only when asked (db: optional columns), nil when not read.
	HeldContainerIDs pq.StringArray `db:"container_ids"`

	Rel ShipmentRel `db:"-"` // relationships attached by the load plan
}

type Container struct {
	ID        string `db:"id"`
	AccountID string `db:"account_id"`

	// The /v2 attributes, in the order /v2 writes them (jsonapi tags: tools/attrgen).
	Number                        string           `db:"number" jsonapi:"number"`
	RefNumbers                    pq.StringArray   `db:"ref_numbers" jsonapi:"ref_numbers,nonnull"`
	EquipmentType                 *EquipmentType   `db:"equipment_type" jsonapi:"equipment_type"`
	EquipmentLength               *int             `db:"equipment_length" jsonapi:"equipment_length"`
	EquipmentHeight               *EquipmentHeight `db:"equipment_height" jsonapi:"equipment_height"`
	WeightInLbs                   *float64         `db:"weight_in_lbs" jsonapi:"weight_in_lbs"`
	CreatedAt                     time.Time        `db:"created_at" jsonapi:"created_at"`
	SealNumber                    *string          `db:"seal_number" jsonapi:"seal_number"`
	PickupLfd                     *time.Time       `db:"pickup_lfd" jsonapi:"pickup_lfd"`
	PickupAppointmentAt           *time.Time       `db:"pickup_appointment_at" jsonapi:"pickup_appointment_at"`
	AvailabilityKnown             bool             `db:"availability_known" jsonapi:"availability_known"`
	AvailableForPickup            *bool            `db:"available_for_pickup" jsonapi:"available_for_pickup"`
	PodArrivedAt                  *time.Time       `db:"pod_arrived_at" jsonapi:"pod_arrived_at"`
	PodDischargedAt               *time.Time       `db:"pod_discharged_at" jsonapi:"pod_discharged_at"`
	PodFullOutAt                  *time.Time       `db:"pod_full_out_at" jsonapi:"pod_full_out_at"`
	TerminalCheckedAt             *time.Time       `db:"terminal_checked_at" jsonapi:"terminal_checked_at"`
	PodFullOutChassisNumber       *string          `db:"pod_full_out_chassis_number" jsonapi:"pod_full_out_chassis_number"`
	LocationAtPodTerminal         *string          `db:"location_at_pod_terminal" jsonapi:"location_at_pod_terminal"`
	FinalDestinationFullOutAt     *time.Time       `db:"final_destination_full_out_at" jsonapi:"final_destination_full_out_at"`
	EmptyTerminatedAt             *time.Time       `db:"empty_terminated_at" jsonapi:"empty_terminated_at"`
	HoldsAtPodTerminal            TerminalHolds    `db:"holds_at_pod_terminal" jsonapi:"holds_at_pod_terminal,nonnull"`
	FeesAtPodTerminal             TerminalFees     `db:"fees_at_pod_terminal" jsonapi:"fees_at_pod_terminal,nonnull"`
	PodTimezone                   *string          `db:"pod_timezone" jsonapi:"pod_timezone"`
	FinalDestinationTimezone      *string          `db:"final_destination_timezone" jsonapi:"final_destination_timezone"`
	EmptyTerminatedTimezone       *string          `db:"empty_terminated_timezone" jsonapi:"empty_terminated_timezone"`
	PodRailCarrierScac            *string          `db:"pod_rail_carrier_scac" jsonapi:"pod_rail_carrier_scac"`
	IndRailCarrierScac            *string          `db:"ind_rail_carrier_scac" jsonapi:"ind_rail_carrier_scac"`
	PodLastTrackingRequestAt      *time.Time       `db:"pod_last_tracking_request_at" jsonapi:"pod_last_tracking_request_at"`
	ShipmentLastTrackingRequestAt *time.Time       `db:"shipment_last_tracking_request_at" jsonapi:"shipment_last_tracking_request_at"`
	PodRailLoadedAt               *time.Time       `db:"pod_rail_loaded_at" jsonapi:"pod_rail_loaded_at"`
	PodRailDepartedAt             *time.Time       `db:"pod_rail_departed_at" jsonapi:"pod_rail_departed_at"`
	IndEtaAt                      *time.Time       `db:"ind_eta_at" jsonapi:"ind_eta_at"`
	IndAtaAt                      *time.Time       `db:"ind_ata_at" jsonapi:"ind_ata_at"`
	IndRailUnloadedAt             *time.Time       `db:"ind_rail_unloaded_at" jsonapi:"ind_rail_unloaded_at"`
	IndFacilityLfdOn              *time.Time       `db:"ind_facility_lfd_on" jsonapi:"ind_facility_lfd_on"`
	PickupLfdTerminal             *time.Time       `db:"pickup_lfd_terminal" jsonapi:"import_deadlines.pickup_lfd_terminal"`
	PickupLfdRail                 *time.Time       `db:"pickup_lfd_rail" jsonapi:"import_deadlines.pickup_lfd_rail"`
	PickupLfdLine                 *time.Time       `db:"pickup_lfd_line" jsonapi:"import_deadlines.pickup_lfd_line"`
	CurrentStatus                 ContainerStatus  `db:"current_status" jsonapi:"current_status"`

	// Not /v2 attributes: keys, relationships' ids and bookkeeping.
	ShipmentID       string    `db:"shipment_id"`
	PodTerminalID    *string   `db:"pod_terminal_id"`
	PickupFacilityID *string   `db:"pickup_facility_id"`
	UpdatedAt        time.Time `db:"updated_at"`

	// The journey's linkage (ids in time order), when the read gathered
	// it in the container's own statement: columns a read selects only
	// when asked (db: optional columns), nil when not read.
	HeldTransportEventIDs pq.StringArray `db:"transport_event_ids"`
	HeldRawEventIDs       pq.StringArray `db:"raw_event_ids"`

	Rel ContainerRel `db:"-"` // relationships attached by the load plan
}

// ImportDeadlines groups the container's last-free-day deadlines; nil when
// none is known.
type ImportDeadlines struct {
	PickupLfdTerminal *time.Time
	PickupLfdRail     *time.Time
	PickupLfdLine     *time.Time
}

// ImportDeadlines returns the container's deadlines, or nil when all are unknown.
func (c *Container) ImportDeadlines() *ImportDeadlines {
	if c.PickupLfdTerminal == nil && c.PickupLfdRail == nil && c.PickupLfdLine == nil {
		return nil
	}
	return &ImportDeadlines{PickupLfdTerminal: c.PickupLfdTerminal, PickupLfdRail: c.PickupLfdRail, PickupLfdLine: c.PickupLfdLine}
}

type TerminalHold struct {
	Name        string     `json:"name"`
	Status      HoldStatus `json:"status"`
	Description *string    `json:"description"`
}

type TerminalFee struct {
	Type         FeeType `json:"type"`
	Amount       float64 `json:"amount"`
	CurrencyCode string  `json:"currency_code"`
}

// TerminalHolds is the jsonb array column of holds.
type TerminalHolds []TerminalHold

func (h *TerminalHolds) Scan(src any) error {
	if emptyArray(src) {
		*h = TerminalHolds{}
		return nil
	}
	if v, ok := scanHolds(src); ok {
		*h = v
		return nil
	}
	return scanJSON(src, h)
}

func (h TerminalHolds) Value() (driver.Value, error) { return valueJSON(h, "[]") }

// TerminalFees is the jsonb array column of fees.
type TerminalFees []TerminalFee

func (f *TerminalFees) Scan(src any) error {
	if emptyArray(src) {
		*f = TerminalFees{}
		return nil
	}
	if v, ok := scanFees(src); ok {
		*f = v
		return nil
	}
	return scanJSON(src, f)
}

func (f TerminalFees) Value() (driver.Value, error) { return valueJSON(f, "[]") }

type EmailSubmission struct {
	ID        string `db:"id"`
	AccountID string `db:"account_id"`

	// The /v2 attributes, in the order /v2 writes them (jsonapi tags: tools/attrgen).
	Subject     *string        `db:"subject" jsonapi:"subject"`
	BodyPreview *string        `db:"body_preview" jsonapi:"body_preview"`
	From        pq.StringArray `db:"from_addresses" jsonapi:"from,nonnull"`
	To          pq.StringArray `db:"to_addresses" jsonapi:"to,nonnull"`
	Cc          pq.StringArray `db:"cc_addresses" jsonapi:"cc,nonnull"`
	MessageID   *string        `db:"message_id" jsonapi:"message_id"`
	SentAt      *time.Time     `db:"sent_at" jsonapi:"sent_at"`
	CreatedAt   time.Time      `db:"created_at" jsonapi:"created_at"`
	UpdatedAt   time.Time      `db:"updated_at" jsonapi:"updated_at"`

	// Not /v2 attributes: keys, relationships' ids and bookkeeping.
	UserID *string `db:"user_id"`
	Body   *string `db:"body"`

	Rel EmailSubmissionRel `db:"-"` // relationships attached by the load plan
}

type DocumentRepresentation struct {
	ID            string    `db:"id"`
	AccountID     string    `db:"account_id"`
	DocumentID    string    `db:"document_id"`
	SchemaVersion string    `db:"schema_version"`
	Payload       JSON      `db:"payload"`
	CreatedAt     time.Time `db:"created_at"`
	UpdatedAt     time.Time `db:"updated_at"`
}

type Document struct {
	AccountID string `db:"account_id"`

	// The /v2 attributes, in the order /v2 writes them (jsonapi tags: tools/attrgen).
	ID                  string         `db:"id" jsonapi:"id"`
	Name                string         `db:"name" jsonapi:"name"`
	DocumentType        string         `db:"document_type" jsonapi:"document_type"`
	DocumentTypeManual  *string        `db:"document_type_manual" jsonapi:"document_type_manual"`
	ClassificationNotes *string        `db:"classification_notes" jsonapi:"classification_notes"`
	Source              DocumentSource `db:"source" jsonapi:"source"`
	FileName            string         `db:"file_name" jsonapi:"file_name"`
	FileContentType     *string        `db:"file_content_type" jsonapi:"file_content_type"`
	FileSizeBytes       *int64         `db:"file_size_bytes" jsonapi:"file_size_bytes"`
	CreatedAt           time.Time      `db:"created_at" jsonapi:"created_at"`
	UpdatedAt           time.Time      `db:"updated_at" jsonapi:"updated_at"`

	// Not /v2 attributes: keys, relationships' ids and bookkeeping.
	UserID                       *string `db:"user_id"`
	EmailSubmissionID            *string `db:"email_submission_id"`
	LastDocumentRepresentationID *string `db:"last_document_representation_id"`

	Rel DocumentRel `db:"-"` // relationships attached by the load plan
}

type CustomFieldDefinition struct {
	ID        string `db:"id"`
	AccountID string `db:"account_id"`

	// The /v2 attributes, in the order /v2 writes them (jsonapi tags: tools/attrgen).
	EntityType    CustomFieldEntityType `db:"entity_type" jsonapi:"entity_type"`
	APISlug       string                `db:"api_slug" jsonapi:"api_slug"`
	DisplayName   string                `db:"display_name" jsonapi:"display_name"`
	Description   *string               `db:"description" jsonapi:"description"`
	DataType      CustomFieldDataType   `db:"data_type" jsonapi:"data_type"`
	ReferenceType *string               `db:"reference_type" jsonapi:"reference_type"`
	Validation    JSON                  `db:"validation" jsonapi:"validation"`
	DefaultFormat *string               `db:"default_format" jsonapi:"default_format"`
	DefaultValue  JSON                  `db:"default_value" jsonapi:"default_value"`

	// Not /v2 attributes: keys, relationships' ids and bookkeeping.
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`

	Rel DefinitionRel `db:"-"` // relationships attached by the load plan
}

type CustomFieldOption struct {
	ID string `db:"id"`

	// The /v2 attributes, in the order /v2 writes them (jsonapi tags: tools/attrgen).
	Label    string `db:"label" jsonapi:"label"`
	Value    string `db:"value" jsonapi:"value"`
	Position *int   `db:"position" jsonapi:"position"`

	// Not /v2 attributes: keys, relationships' ids and bookkeeping.
	DefinitionID string    `db:"definition_id"`
	CreatedAt    time.Time `db:"created_at"`
	UpdatedAt    time.Time `db:"updated_at"`

	Rel OptionRel `db:"-"` // relationships attached by the load plan
}

// CustomField is one value of a definition on one entity (shipment,
// container or tracking request).
type CustomField struct {
	ID                string    `db:"id"`
	AccountID         string    `db:"account_id"`
	DefinitionID      string    `db:"definition_id"`
	ShipmentID        *string   `db:"shipment_id"`
	ContainerID       *string   `db:"container_id"`
	TrackingRequestID *string   `db:"tracking_request_id"`
	EntityID          string    `db:"entity_id"`
	Value             JSON      `db:"value"`
	CreatedAt         time.Time `db:"created_at"`
	UpdatedAt         time.Time `db:"updated_at"`

	// Read with the value (one statement) so a page of custom fields needs
	// no further query for its slug and display value.
	APISlug      string              `db:"api_slug"`
	DataType     CustomFieldDataType `db:"data_type"`
	OptionLabels pq.StringArray      `db:"option_labels"` // labels of the selected options, in value order
	// ReferenceType is the definition's, for a reference field: the type
	// of record its value names ("user"); see ReferencedUserID.
	ReferenceType *string `db:"reference_type"`

	Rel CustomFieldRel `db:"-"` // relationships attached by the load plan
}

// EntityType returns "shipment", "container" or "tracking_request".
func (c *CustomField) EntityType() string {
	switch {
	case c.ContainerID != nil:
		return "container"
	case c.TrackingRequestID != nil:
		return TrackingRequestType
	}
	return "shipment"
}

// EntityKind is the definition entity type of the entity the value is set
// on (Shipment, Container or TrackingRequest).
func (c *CustomField) EntityKind() CustomFieldEntityType {
	switch {
	case c.ContainerID != nil:
		return "Container"
	case c.TrackingRequestID != nil:
		return "TrackingRequest"
	}
	return "Shipment"
}

// JSON is a raw JSON value: a jsonb column and the GraphQL JSON scalar.
// A nil JSON is SQL NULL and GraphQL null.
type JSON json.RawMessage

func (j *JSON) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*j = nil
	case []byte:
		*j = append(JSON(nil), v...)
	case string:
		*j = JSON(v)
	default:
		return fmt.Errorf("model.JSON: cannot scan %T", src)
	}
	return nil
}

func (j JSON) Value() (driver.Value, error) {
	if j == nil {
		return nil, nil
	}
	return []byte(j), nil
}

func (j JSON) MarshalJSON() ([]byte, error) {
	if j == nil {
		return []byte("null"), nil
	}
	return []byte(j), nil
}

func (j *JSON) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*j = nil
		return nil
	}
	*j = append(JSON(nil), b...)
	return nil
}

func (j JSON) MarshalGQL(w io.Writer) {
	if j == nil {
		_, _ = io.WriteString(w, "null")
		return
	}
	_, _ = w.Write(j)
}

func (j *JSON) UnmarshalGQL(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("JSON: %w", err)
	}
	if string(b) == "null" {
		*j = nil
		return nil
	}
	*j = b
	return nil
}

// emptyArray reports whether src is the jsonb [] most holds and fees
// columns hold: it is read as an empty list without parsing, as
// json.Unmarshal would read it.
func emptyArray(src any) bool {
	switch v := src.(type) {
	case []byte:
		return string(v) == "[]"
	case string:
		return v == "[]"
	}
	return false
}

func scanJSON(src any, dst any) error {
	switch v := src.(type) {
	case nil:
		return nil
	case []byte:
		return json.Unmarshal(v, dst)
	case string:
		return json.Unmarshal([]byte(v), dst)
	}
	return fmt.Errorf("cannot scan %T into %T", src, dst)
}

func valueJSON(v any, empty string) (driver.Value, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return []byte(empty), nil
	}
	return b, nil
}
