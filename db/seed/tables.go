package seed

import "strings"

// The tables the seed writes, with the columns it sets: every column but
// the generated ones (pickup_lfd, has_holds, file_name_tsv, entity_id).
// Rows are []any in this column order, ready for COPY.

type seedTable struct {
	name string
	cols []string
	copy string // the COPY statement
}

func newSeedTable(name string, cols ...string) *seedTable {
	// FREEZE: every table is truncated earlier in the same transaction, so
	// PostgreSQL may write the rows frozen and all-visible. Nobody has to
	// rewrite a million pages to set hint bits (or vacuum to freeze them)
	// on the first reads after a seed, and index-only scans work at once.
	return &seedTable{name: name, cols: cols,
		copy: "COPY " + name + " (" + strings.Join(cols, ", ") + ") FROM STDIN WITH (FREEZE)"}
}

// Shipment columns, by name, so rows are filled by column rather than by a
// position that is easy to get wrong in a 44-column row.
const (
	shID = iota
	shAccountID
	shBOL
	shNormalized
	shRefNumbers
	shTags
	shLineID
	shLineSCAC
	shLineName
	shLineShort
	shPOLID
	shPOLLocode
	shPOLName
	shPODID
	shPODLocode
	shPODName
	shDestPortID
	shDestMetroID
	shDestLocode
	shDestName
	shPODTerminalID
	shDestTerminalID
	shDestRailID
	shCustomer
	shVesselName
	shVesselIMO
	shVoyage
	shPolEtd
	shPolAtd
	shPodEta
	shPodOrigEta
	shPodAta
	shDestEta
	shDestAta
	shPolTZ
	shPodTZ
	shDestTZ
	shTrackAttempted
	shTrackSucceeded
	shTrackStoppedAt
	shTrackStoppedReason
	shTrackStoppedBy
	shCreatedAt
	shUpdatedAt
	shNumCols
)

var seedShipmentCols = [shNumCols]string{
	shID: "id", shAccountID: "account_id", shBOL: "bill_of_lading_number", shNormalized: "normalized_number",
	shRefNumbers: "ref_numbers", shTags: "tags", shLineID: "shipping_line_id", shLineSCAC: "shipping_line_scac",
	shLineName: "shipping_line_name", shLineShort: "shipping_line_short_name", shPOLID: "port_of_lading_id",
	shPOLLocode: "port_of_lading_locode", shPOLName: "port_of_lading_name", shPODID: "port_of_discharge_id",
	shPODLocode: "port_of_discharge_locode", shPODName: "port_of_discharge_name", shDestPortID: "destination_port_id",
	shDestMetroID: "destination_metro_area_id", shDestLocode: "destination_locode", shDestName: "destination_name",
	shPODTerminalID: "pod_terminal_id", shDestTerminalID: "destination_terminal_id",
	shDestRailID: "destination_rail_terminal_id", shCustomer: "customer_name", shVesselName: "pod_vessel_name",
	shVesselIMO: "pod_vessel_imo", shVoyage: "pod_voyage_number", shPolEtd: "pol_etd_at", shPolAtd: "pol_atd_at",
	shPodEta: "pod_eta_at", shPodOrigEta: "pod_original_eta_at", shPodAta: "pod_ata_at",
	shDestEta: "destination_eta_at", shDestAta: "destination_ata_at", shPolTZ: "pol_timezone",
	shPodTZ: "pod_timezone", shDestTZ: "destination_timezone",
	shTrackAttempted: "line_tracking_last_attempted_at", shTrackSucceeded: "line_tracking_last_succeeded_at",
	shTrackStoppedAt: "line_tracking_stopped_at", shTrackStoppedReason: "line_tracking_stopped_reason",
	shTrackStoppedBy: "line_tracking_stopped_by_user_id", shCreatedAt: "created_at", shUpdatedAt: "updated_at",
}

// Container columns, by name.
const (
	ctID = iota
	ctAccountID
	ctShipmentID
	ctNumber
	ctRefNumbers
	ctEquipType
	ctEquipLength
	ctEquipHeight
	ctWeight
	ctSeal
	ctPODTerminalID
	ctPickupFacilityID
	ctPickupAppointment
	ctAvailabilityKnown
	ctAvailable
	ctPodArrived
	ctPodDischarged
	ctPodFullOut
	ctTerminalChecked
	ctChassis
	ctLocation
	ctFinalFullOut
	ctEmptyTerminated
	ctHolds
	ctFees
	ctPodTZ
	ctFinalTZ
	ctEmptyTZ
	ctPodRailSCAC
	ctIndRailSCAC
	ctPodLastRequest
	ctShipmentLastRequest
	ctRailLoaded
	ctRailDeparted
	ctIndEta
	ctIndAta
	ctIndUnloaded
	ctIndFacilityLfd
	ctLfdTerminal
	ctLfdRail
	ctLfdLine
	ctStatus
	ctCreatedAt
	ctUpdatedAt
	ctNumCols
)

var seedContainerCols = [ctNumCols]string{
	ctID: "id", ctAccountID: "account_id", ctShipmentID: "shipment_id", ctNumber: "number",
	ctRefNumbers: "ref_numbers", ctEquipType: "equipment_type", ctEquipLength: "equipment_length",
	ctEquipHeight: "equipment_height", ctWeight: "weight_in_lbs", ctSeal: "seal_number",
	ctPODTerminalID: "pod_terminal_id", ctPickupFacilityID: "pickup_facility_id",
	ctPickupAppointment: "pickup_appointment_at", ctAvailabilityKnown: "availability_known",
	ctAvailable: "available_for_pickup", ctPodArrived: "pod_arrived_at", ctPodDischarged: "pod_discharged_at",
	ctPodFullOut: "pod_full_out_at", ctTerminalChecked: "terminal_checked_at",
	ctChassis: "pod_full_out_chassis_number", ctLocation: "location_at_pod_terminal",
	ctFinalFullOut: "final_destination_full_out_at", ctEmptyTerminated: "empty_terminated_at",
	ctHolds: "holds_at_pod_terminal", ctFees: "fees_at_pod_terminal", ctPodTZ: "pod_timezone",
	ctFinalTZ: "final_destination_timezone", ctEmptyTZ: "empty_terminated_timezone",
	ctPodRailSCAC: "pod_rail_carrier_scac", ctIndRailSCAC: "ind_rail_carrier_scac",
	ctPodLastRequest: "pod_last_tracking_request_at", ctShipmentLastRequest: "shipment_last_tracking_request_at",
	ctRailLoaded: "pod_rail_loaded_at", ctRailDeparted: "pod_rail_departed_at", ctIndEta: "ind_eta_at",
	ctIndAta: "ind_ata_at", ctIndUnloaded: "ind_rail_unloaded_at", ctIndFacilityLfd: "ind_facility_lfd_on",
	ctLfdTerminal: "pickup_lfd_terminal", ctLfdRail: "pickup_lfd_rail", ctLfdLine: "pickup_lfd_line",
	ctStatus: "current_status", ctCreatedAt: "created_at", ctUpdatedAt: "updated_at",
}

// Reference and account tables: written once, before the shipments.
var (
	seedPortsTable = newSeedTable("ports",
		"id", "code", "name", "city", "state_abbr", "country_code", "time_zone", "latitude", "longitude", "created_at")
	seedMetrosTable = newSeedTable("metro_areas",
		"id", "code", "name", "state_abbr", "country_code", "time_zone", "latitude", "longitude", "created_at")
	seedTerminalsTable = newSeedTable("terminals",
		"id", "port_id", "name", "nickname", "firms_code", "city", "state", "state_abbr", "country", "created_at")
	seedRailTable = newSeedTable("rail_terminals",
		"id", "port_id", "metro_area_id", "name", "nickname", "firms_code", "created_at")
	seedLinesTable = newSeedTable("shipping_lines",
		"id", "scac", "name", "short_name", "bill_of_lading_prefix", "alternative_scacs",
		"bill_of_lading_tracking_support", "booking_number_tracking_support", "container_number_tracking_support", "created_at")
	seedAccountsTable = newSeedTable("accounts", "id", "slug", "company_name", "created_at", "updated_at")
	seedUsersTable    = newSeedTable("users",
		"id", "account_id", "email", "first_name", "last_name", "role", "created_at", "updated_at")
	seedTokensTable = newSeedTable("api_tokens",
		"id", "account_id", "user_id", "role", "token_sha256", "prefix", "name", "created_at")
	seedDefsTable = newSeedTable("custom_field_definitions",
		"id", "account_id", "entity_type", "api_slug", "display_name", "description", "data_type",
		"reference_type", "validation", "default_format", "default_value", "created_at", "updated_at")
	seedOptionsTable = newSeedTable("custom_field_options",
		"id", "account_id", "definition_id", "label", "value", "position", "created_at", "updated_at")
)

// Bulk tables, written per chunk of shipments in this order: parents
// before children, in case the foreign keys are in force.
const (
	tShipments = iota
	tContainers
	tEmails
	tDocuments
	tReps
	tDocShipments
	tDocContainers
	tCustomFields
	tDocTexts
	seedNumBulk
)

var seedBulkTables = [seedNumBulk]*seedTable{
	tShipments:  newSeedTable("shipments", seedShipmentCols[:]...),
	tContainers: newSeedTable("containers", seedContainerCols[:]...),
	tEmails: newSeedTable("email_submissions",
		"id", "account_id", "user_id", "subject", "body", "body_preview", "from_addresses", "to_addresses",
		"cc_addresses", "message_id", "sent_at", "created_at", "updated_at"),
	tDocuments: newSeedTable("documents",
		"id", "account_id", "user_id", "email_submission_id", "last_document_representation_id", "name",
		"document_type", "document_type_manual", "classification_notes", "source", "file_name",
		"file_content_type", "file_size_bytes", "created_at", "updated_at", "extraction_status"),
	tReps: newSeedTable("document_representations",
		"id", "account_id", "document_id", "schema_version", "payload", "created_at", "updated_at"),
	tDocShipments:  newSeedTable("document_shipments", "account_id", "document_id", "shipment_id"),
	tDocContainers: newSeedTable("document_containers", "account_id", "document_id", "container_id"),
	tCustomFields: newSeedTable("custom_fields",
		"id", "account_id", "definition_id", "shipment_id", "container_id", "value", "created_at", "updated_at"),
	// The text of the seeded PDFs (DocumentLines with their numbers),
	// as the extraction job would have kept it: relink and reclassify run
	// on it.
	tDocTexts: newSeedTable("document_texts", "account_id", "document_id", "text", "extractor", "extracted_at"),
}

// seedAllTables is what a seed replaces: every table of the data model.
var seedAllTables = []string{
	"document_texts", "tracking_requests", "custom_fields", "custom_field_options", "custom_field_definitions", "document_containers",
	"document_shipments", "document_representations", "documents", "email_submissions", "containers",
	"shipments", "shipping_lines", "rail_terminals", "terminals", "metro_areas", "ports", "api_tokens",
	"users", "accounts", "transport_events", "raw_events", "vessels",
}
