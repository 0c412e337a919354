package dcsa

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The code tables of DCSA Track & Trace v2.2 (dcsa-tnt-v2.2.0.yaml), one
// string type per table so a mapping switch over them reads as the standard
// does. Valid reports whether a code is in the table of v2.2; a code outside
// it is kept as sent (carriers add codes before the standard does), and
// Event.Validate only rejects what the standard requires.

// EventType is the discriminator of an event.
type EventType string

const (
	EventTypeShipment  EventType = "SHIPMENT"
	EventTypeTransport EventType = "TRANSPORT"
	EventTypeEquipment EventType = "EQUIPMENT"
)

// Valid reports whether t is one of the three event types.
func (t EventType) Valid() bool {
	return t == EventTypeShipment || t == EventTypeTransport || t == EventTypeEquipment
}

// EventClassifierCode says whether an event happened (ACT), is planned (PLN)
// or estimated (EST).
type EventClassifierCode string

const (
	ClassifierActual    EventClassifierCode = "ACT"
	ClassifierPlanned   EventClassifierCode = "PLN"
	ClassifierEstimated EventClassifierCode = "EST"
)

// Valid reports whether c is ACT, PLN or EST.
func (c EventClassifierCode) Valid() bool {
	return c == ClassifierActual || c == ClassifierPlanned || c == ClassifierEstimated
}

// ShipmentEventTypeCode is the status of a document in a shipment event.
type ShipmentEventTypeCode string

const (
	ShipmentReceived        ShipmentEventTypeCode = "RECE"
	ShipmentDrafted         ShipmentEventTypeCode = "DRFT"
	ShipmentPendingApproval ShipmentEventTypeCode = "PENA"
	ShipmentPendingUpdate   ShipmentEventTypeCode = "PENU"
	ShipmentRejected        ShipmentEventTypeCode = "REJE"
	ShipmentApproved        ShipmentEventTypeCode = "APPR"
	ShipmentIssued          ShipmentEventTypeCode = "ISSU"
	ShipmentSurrendered     ShipmentEventTypeCode = "SURR"
	ShipmentSubmitted       ShipmentEventTypeCode = "SUBM"
	ShipmentVoid            ShipmentEventTypeCode = "VOID"
	ShipmentConfirmed       ShipmentEventTypeCode = "CONF"
	ShipmentRequested       ShipmentEventTypeCode = "REQS"
	ShipmentCompleted       ShipmentEventTypeCode = "CMPL"
	ShipmentOnHold          ShipmentEventTypeCode = "HOLD"
	ShipmentReleased        ShipmentEventTypeCode = "RELS"
)

// Valid reports whether c is in the v2.2 table.
func (c ShipmentEventTypeCode) Valid() bool {
	switch c {
	case ShipmentReceived, ShipmentDrafted, ShipmentPendingApproval, ShipmentPendingUpdate, ShipmentRejected,
		ShipmentApproved, ShipmentIssued, ShipmentSurrendered, ShipmentSubmitted, ShipmentVoid,
		ShipmentConfirmed, ShipmentRequested, ShipmentCompleted, ShipmentOnHold, ShipmentReleased:
		return true
	}
	return false
}

// DocumentTypeCode says what a shipment event's documentID points to.
type DocumentTypeCode string

const (
	DocumentCarrierBookingRequest DocumentTypeCode = "CBR"
	DocumentBooking               DocumentTypeCode = "BKG"
	DocumentShippingInstruction   DocumentTypeCode = "SHI"
	DocumentShipmentRelease       DocumentTypeCode = "SRM"
	DocumentTransportDocument     DocumentTypeCode = "TRD"
	DocumentArrivalNotice         DocumentTypeCode = "ARN"
	DocumentVerifiedGrossMass     DocumentTypeCode = "VGM"
	DocumentCargoSurvey           DocumentTypeCode = "CAS"
	DocumentCustomsInspection     DocumentTypeCode = "CUS"
	DocumentDangerousGoods        DocumentTypeCode = "DGD"
	DocumentOutOfGauge            DocumentTypeCode = "OOG"
)

// Valid reports whether c is in the v2.2 table.
func (c DocumentTypeCode) Valid() bool {
	switch c {
	case DocumentCarrierBookingRequest, DocumentBooking, DocumentShippingInstruction, DocumentShipmentRelease,
		DocumentTransportDocument, DocumentArrivalNotice, DocumentVerifiedGrossMass, DocumentCargoSurvey,
		DocumentCustomsInspection, DocumentDangerousGoods, DocumentOutOfGauge:
		return true
	}
	return false
}

// TransportEventTypeCode is a vessel's (or train's, truck's, barge's)
// arrival or departure at a transport call.
type TransportEventTypeCode string

const (
	TransportArrived  TransportEventTypeCode = "ARRI"
	TransportDeparted TransportEventTypeCode = "DEPA"
)

// Valid reports whether c is ARRI or DEPA.
func (c TransportEventTypeCode) Valid() bool { return c == TransportArrived || c == TransportDeparted }

// EquipmentEventTypeCode is what happened to a container.
type EquipmentEventTypeCode string

const (
	EquipmentLoaded     EquipmentEventTypeCode = "LOAD"
	EquipmentDischarged EquipmentEventTypeCode = "DISC"
	EquipmentGatedIn    EquipmentEventTypeCode = "GTIN"
	EquipmentGatedOut   EquipmentEventTypeCode = "GTOT"
	EquipmentStuffed    EquipmentEventTypeCode = "STUF"
	EquipmentStripped   EquipmentEventTypeCode = "STRP"
	EquipmentPickUp     EquipmentEventTypeCode = "PICK"
	EquipmentDropOff    EquipmentEventTypeCode = "DROP"
	EquipmentInspected  EquipmentEventTypeCode = "INSP"
	EquipmentResealed   EquipmentEventTypeCode = "RSEA"
	EquipmentRemoved    EquipmentEventTypeCode = "RMVD"
)

// Valid reports whether c is in the v2.2 table.
func (c EquipmentEventTypeCode) Valid() bool {
	switch c {
	case EquipmentLoaded, EquipmentDischarged, EquipmentGatedIn, EquipmentGatedOut, EquipmentStuffed,
		EquipmentStripped, EquipmentPickUp, EquipmentDropOff, EquipmentInspected, EquipmentResealed, EquipmentRemoved:
		return true
	}
	return false
}

// EmptyIndicatorCode says whether a container is empty or laden.
type EmptyIndicatorCode string

const (
	Empty EmptyIndicatorCode = "EMPTY"
	Laden EmptyIndicatorCode = "LADEN"
)

// Valid reports whether c is EMPTY or LADEN.
func (c EmptyIndicatorCode) Valid() bool { return c == Empty || c == Laden }

// ModeOfTransport is how a transport call is served.
type ModeOfTransport string

const (
	ModeVessel ModeOfTransport = "VESSEL"
	ModeRail   ModeOfTransport = "RAIL"
	ModeTruck  ModeOfTransport = "TRUCK"
	ModeBarge  ModeOfTransport = "BARGE"
)

// Valid reports whether m is in the v2.2 table.
func (m ModeOfTransport) Valid() bool {
	return m == ModeVessel || m == ModeRail || m == ModeTruck || m == ModeBarge
}

// FacilityTypeCode is the kind of facility of a transport call.
type FacilityTypeCode string

const (
	FacilityBorderCrossing      FacilityTypeCode = "BOCR"
	FacilityCustomerLocation    FacilityTypeCode = "CLOC"
	FacilityContainerFreight    FacilityTypeCode = "COFS"
	FacilityOffDock             FacilityTypeCode = "OFFD"
	FacilityDepot               FacilityTypeCode = "DEPO"
	FacilityInlandTerminal      FacilityTypeCode = "INTE"
	FacilityPortTerminal        FacilityTypeCode = "POTE"
	FacilityRamp                FacilityTypeCode = "RAMP"
	FacilityContainerYardLegacy FacilityTypeCode = "COYA" // deprecated by v2.2: OFFD
)

// FacilityCodeListProvider names the code list of a facilityCode.
type FacilityCodeListProvider string

const (
	FacilityListBIC  FacilityCodeListProvider = "BIC"
	FacilityListSMDG FacilityCodeListProvider = "SMDG"
)

// DocumentReferenceType says what a documentReferenceValue points to. (The
// v2.2 document's enum spells the values "BKG (Booking)" and "TRD (Transport
// Document)", a known slip of the generated document: carriers send the codes.)
type DocumentReferenceType string

const (
	DocumentReferenceBooking           DocumentReferenceType = "BKG"
	DocumentReferenceTransportDocument DocumentReferenceType = "TRD"
)

// ReferenceType is the kind of a shipper's or forwarder's reference.
type ReferenceType string

const (
	ReferenceFreightForwarder ReferenceType = "FF"
	ReferenceShipper          ReferenceType = "SI"
	ReferencePurchaseOrder    ReferenceType = "PO"
	ReferenceCustomer         ReferenceType = "CR"
	ReferenceConsignee        ReferenceType = "AAO"
	ReferenceEquipment        ReferenceType = "EQ"
)

// SealSource says who affixed a seal.
type SealSource string

const (
	SealByCarrier       SealSource = "CAR"
	SealByShipper       SealSource = "SHI"
	SealByPhytosanitary SealSource = "PHY"
	SealByVeterinary    SealSource = "VET"
	SealByCustoms       SealSource = "CUS"
)

// SealType is the kind of seal.
type SealType string

const (
	SealKeylessPadlock SealType = "KLP"
	SealBolt           SealType = "BLT"
	SealWire           SealType = "WIR"
)

// Event is one DCSA v2.2 event of any of the three types, as the JSON of
// GET /v2/events carries it: the fields of the base event, then those of
// each type (empty when the type does not carry them). EventID is the
// carrier's idempotency key: the same event is always sent with the same id,
// and a changed estimate is a new event with a new id.
type Event struct {
	EventID              string              `json:"eventID,omitempty"`
	EventType            EventType           `json:"eventType"`
	EventClassifierCode  EventClassifierCode `json:"eventClassifierCode"`
	EventDateTime        time.Time           `json:"eventDateTime"`
	EventCreatedDateTime time.Time           `json:"eventCreatedDateTime"`

	// SHIPMENT: a document's status. DocumentID holds the booking reference
	// (BKG), the transport document reference (TRD), … per DocumentTypeCode.
	ShipmentEventTypeCode ShipmentEventTypeCode `json:"shipmentEventTypeCode,omitempty"`
	DocumentTypeCode      DocumentTypeCode      `json:"documentTypeCode,omitempty"`
	DocumentID            string                `json:"documentID,omitempty"`
	Reason                string                `json:"reason,omitempty"`

	// TRANSPORT: an arrival or departure at TransportCall.
	TransportEventTypeCode TransportEventTypeCode `json:"transportEventTypeCode,omitempty"`
	DelayReasonCode        string                 `json:"delayReasonCode,omitempty"` // SMDG delay reason code
	ChangeRemark           string                 `json:"changeRemark,omitempty"`

	// EQUIPMENT: a container's move; TransportCall when it is one of a call
	// (LOAD, DISC), EventLocation where it happened.
	EquipmentEventTypeCode EquipmentEventTypeCode `json:"equipmentEventTypeCode,omitempty"`
	EquipmentReference     string                 `json:"equipmentReference,omitempty"`
	ISOEquipmentCode       string                 `json:"ISOEquipmentCode,omitempty"`
	EmptyIndicatorCode     EmptyIndicatorCode     `json:"emptyIndicatorCode,omitempty"`
	EventLocation          *Location              `json:"eventLocation,omitempty"`

	// TRANSPORT and EQUIPMENT.
	TransportCall      *TransportCall      `json:"transportCall,omitempty"`
	DocumentReferences []DocumentReference `json:"documentReferences,omitempty"`
	Seals              []Seal              `json:"seals,omitempty"`

	// All three types.
	References []Reference `json:"references,omitempty"`

	// Raw is the event's JSON as the carrier sent it (set by its
	// UnmarshalJSON; not part of the event's JSON): what a store of the
	// carrier's payload keeps, instead of a JSON of it made again.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes an event and keeps its JSON as sent (Raw): the
// decoder hands it the element's own bytes, so no second scanner of the
// page is needed to find them.
func (e *Event) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, (*plainEvent)(e)); err != nil {
		return err
	}
	e.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// plainEvent is an Event without its UnmarshalJSON: what decoders fill.
type plainEvent Event

// TransportCall is a vessel's (or train's, …) call at a facility, the
// place of a transport event and of a LOAD or DISC.
type TransportCall struct {
	TransportCallID             string                   `json:"transportCallID"`
	CarrierServiceCode          string                   `json:"carrierServiceCode,omitempty"`
	ExportVoyageNumber          string                   `json:"exportVoyageNumber,omitempty"`
	ImportVoyageNumber          string                   `json:"importVoyageNumber,omitempty"`
	CarrierVoyageNumber         string                   `json:"carrierVoyageNumber,omitempty"` // deprecated by v2.2: ExportVoyageNumber
	TransportCallSequenceNumber *int                     `json:"transportCallSequenceNumber,omitempty"`
	UNLocationCode              string                   `json:"UNLocationCode,omitempty"`
	FacilityCode                string                   `json:"facilityCode,omitempty"`
	FacilityCodeListProvider    FacilityCodeListProvider `json:"facilityCodeListProvider,omitempty"`
	FacilityTypeCode            FacilityTypeCode         `json:"facilityTypeCode,omitempty"`
	OtherFacility               string                   `json:"otherFacility,omitempty"`
	ModeOfTransport             ModeOfTransport          `json:"modeOfTransport"`
	Location                    *Location                `json:"location,omitempty"`
	Vessel                      *Vessel                  `json:"vessel,omitempty"`
}

// Location is a place, by UN/LOCODE, facility code, coordinates or address.
// Latitude and longitude are strings in the standard ("51.9225").
type Location struct {
	LocationName             string                   `json:"locationName,omitempty"`
	Latitude                 string                   `json:"latitude,omitempty"`
	Longitude                string                   `json:"longitude,omitempty"`
	UNLocationCode           string                   `json:"UNLocationCode,omitempty"`
	FacilityCode             string                   `json:"facilityCode,omitempty"`
	FacilityCodeListProvider FacilityCodeListProvider `json:"facilityCodeListProvider,omitempty"`
	Address                  *Address                 `json:"address,omitempty"`
}

// Address is a postal address of a location.
type Address struct {
	Name         string `json:"name,omitempty"`
	Street       string `json:"street,omitempty"`
	StreetNumber string `json:"streetNumber,omitempty"`
	Floor        string `json:"floor,omitempty"`
	PostCode     string `json:"postCode,omitempty"`
	City         string `json:"city,omitempty"`
	StateRegion  string `json:"stateRegion,omitempty"`
	Country      string `json:"country,omitempty"`
}

// Vessel is a ship by its IMO number (7 digits, the last a check digit).
type Vessel struct {
	VesselIMONumber                       string `json:"vesselIMONumber"`
	VesselName                            string `json:"vesselName,omitempty"`
	VesselFlag                            string `json:"vesselFlag,omitempty"` // ISO 3166 alpha-2
	VesselCallSignNumber                  string `json:"vesselCallSignNumber,omitempty"`
	VesselOperatorCarrierCode             string `json:"vesselOperatorCarrierCode,omitempty"`
	VesselOperatorCarrierCodeListProvider string `json:"vesselOperatorCarrierCodeListProvider,omitempty"` // SMDG or NMFTA
}

// DocumentReference links a transport or equipment event to a booking (BKG)
// or a transport document (TRD).
type DocumentReference struct {
	DocumentReferenceType  DocumentReferenceType `json:"documentReferenceType"`
	DocumentReferenceValue string                `json:"documentReferenceValue"`
}

// Reference is a shipper's or forwarder's own reference, shared back.
type Reference struct {
	ReferenceType  ReferenceType `json:"referenceType"`
	ReferenceValue string        `json:"referenceValue"`
}

// Seal is a seal on a container.
type Seal struct {
	SealNumber string     `json:"sealNumber"`
	SealSource SealSource `json:"sealSource,omitempty"`
	SealType   SealType   `json:"sealType"`
}

// ErrorResponse is the DCSA error object a carrier answers a failed request
// with (any status but 200).
type ErrorResponse struct {
	HTTPMethod     string     `json:"httpMethod"`
	RequestURI     string     `json:"requestUri"`
	StatusCode     int        `json:"statusCode"`
	StatusCodeText string     `json:"statusCodeText"`
	ErrorDateTime  string     `json:"errorDateTime"`
	Errors         []SubError `json:"errors"`
}

// SubError is one reason of an ErrorResponse.
type SubError struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Validate reports the first field the standard requires that e lacks (or
// holds a value of the wrong table where the table decides the meaning:
// eventType, eventClassifierCode, the three event type codes, modeOfTransport
// and emptyIndicatorCode). The client rejects a page holding such an event
// as Unrecognized, so what reaches a caller can be mapped without checks.
func (e *Event) Validate() error {
	switch {
	case !e.EventType.Valid():
		return fmt.Errorf("eventType %q", e.EventType)
	case !e.EventClassifierCode.Valid():
		return fmt.Errorf("eventClassifierCode %q", e.EventClassifierCode)
	case e.EventDateTime.IsZero():
		return errors.New("eventDateTime missing")
	case e.EventCreatedDateTime.IsZero():
		return errors.New("eventCreatedDateTime missing")
	}
	switch e.EventType {
	case EventTypeShipment:
		switch {
		case !e.ShipmentEventTypeCode.Valid():
			return fmt.Errorf("shipmentEventTypeCode %q", e.ShipmentEventTypeCode)
		case e.DocumentTypeCode == "":
			return errors.New("documentTypeCode missing")
		case e.DocumentID == "":
			return errors.New("documentID missing")
		}
	case EventTypeTransport:
		if !e.TransportEventTypeCode.Valid() {
			return fmt.Errorf("transportEventTypeCode %q", e.TransportEventTypeCode)
		}
		if e.TransportCall == nil {
			return errors.New("transportCall missing")
		}
	case EventTypeEquipment:
		switch {
		case !e.EquipmentEventTypeCode.Valid():
			return fmt.Errorf("equipmentEventTypeCode %q", e.EquipmentEventTypeCode)
		case !e.EmptyIndicatorCode.Valid():
			return fmt.Errorf("emptyIndicatorCode %q", e.EmptyIndicatorCode)
		}
	}
	if tc := e.TransportCall; tc != nil {
		switch {
		case tc.TransportCallID == "":
			return errors.New("transportCall.transportCallID missing")
		case !tc.ModeOfTransport.Valid():
			return fmt.Errorf("transportCall.modeOfTransport %q", tc.ModeOfTransport)
		case tc.Vessel != nil && tc.Vessel.VesselIMONumber == "":
			return errors.New("transportCall.vessel.vesselIMONumber missing")
		}
	}
	return nil
}

// DocumentReference returns the value of the event's reference of type t
// (a booking, BKG, or a transport document, TRD): from documentReferences,
// or for a shipment event from its documentID when its documentTypeCode is
// t. Empty when the event carries none.
func (e *Event) DocumentReference(t DocumentReferenceType) string {
	for _, r := range e.DocumentReferences {
		if r.DocumentReferenceType == t {
			return r.DocumentReferenceValue
		}
	}
	if e.EventType == EventTypeShipment && string(e.DocumentTypeCode) == string(t) {
		return e.DocumentID
	}
	return ""
}
