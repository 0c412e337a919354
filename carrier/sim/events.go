package sim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"
)

// The JSON of DCSA v2.2 events as the simulator writes them: its own small
// types (the simulator shares nothing with the connector but the standard).
type jsonEvent struct {
	EventID                string          `json:"eventID"`
	EventType              string          `json:"eventType"`
	EventClassifierCode    string          `json:"eventClassifierCode"`
	EventDateTime          string          `json:"eventDateTime"`
	EventCreatedDateTime   string          `json:"eventCreatedDateTime"`
	ShipmentEventTypeCode  string          `json:"shipmentEventTypeCode,omitempty"`
	DocumentTypeCode       string          `json:"documentTypeCode,omitempty"`
	DocumentID             string          `json:"documentID,omitempty"`
	Reason                 string          `json:"reason,omitempty"`
	TransportEventTypeCode string          `json:"transportEventTypeCode,omitempty"`
	DelayReasonCode        string          `json:"delayReasonCode,omitempty"`
	ChangeRemark           string          `json:"changeRemark,omitempty"`
	EquipmentEventTypeCode string          `json:"equipmentEventTypeCode,omitempty"`
	EquipmentReference     string          `json:"equipmentReference,omitempty"`
	ISOEquipmentCode       string          `json:"ISOEquipmentCode,omitempty"`
	EmptyIndicatorCode     string          `json:"emptyIndicatorCode,omitempty"`
	EventLocation          *jsonLocation   `json:"eventLocation,omitempty"`
	TransportCall          *jsonCall       `json:"transportCall,omitempty"`
	DocumentReferences     []jsonDocRef    `json:"documentReferences,omitempty"`
	References             []jsonReference `json:"references,omitempty"`
	Seals                  []jsonSeal      `json:"seals,omitempty"`
}

type jsonLocation struct {
	LocationName   string `json:"locationName,omitempty"`
	Latitude       string `json:"latitude,omitempty"`
	Longitude      string `json:"longitude,omitempty"`
	UNLocationCode string `json:"UNLocationCode,omitempty"`
	FacilityCode   string `json:"facilityCode,omitempty"`
}

type jsonCall struct {
	TransportCallID             string        `json:"transportCallID"`
	CarrierServiceCode          string        `json:"carrierServiceCode,omitempty"`
	ExportVoyageNumber          string        `json:"exportVoyageNumber,omitempty"`
	ImportVoyageNumber          string        `json:"importVoyageNumber,omitempty"`
	TransportCallSequenceNumber int           `json:"transportCallSequenceNumber"`
	UNLocationCode              string        `json:"UNLocationCode"`
	FacilityCode                string        `json:"facilityCode,omitempty"`
	FacilityTypeCode            string        `json:"facilityTypeCode,omitempty"`
	ModeOfTransport             string        `json:"modeOfTransport"`
	Location                    *jsonLocation `json:"location,omitempty"`
	Vessel                      *jsonVessel   `json:"vessel,omitempty"`
}

type jsonVessel struct {
	VesselIMONumber                       string `json:"vesselIMONumber"`
	VesselName                            string `json:"vesselName"`
	VesselFlag                            string `json:"vesselFlag"`
	VesselCallSignNumber                  string `json:"vesselCallSignNumber"`
	VesselOperatorCarrierCode             string `json:"vesselOperatorCarrierCode"`
	VesselOperatorCarrierCodeListProvider string `json:"vesselOperatorCarrierCodeListProvider"`
}

type jsonDocRef struct {
	DocumentReferenceType  string `json:"documentReferenceType"`
	DocumentReferenceValue string `json:"documentReferenceValue"`
}

type jsonReference struct {
	ReferenceType  string `json:"referenceType"`
	ReferenceValue string `json:"referenceValue"`
}

type jsonSeal struct {
	SealNumber string `json:"sealNumber"`
	SealSource string `json:"sealSource"`
	SealType   string `json:"sealType"`
}

// event is one published-at-some-time event: what the filters look at and
// its JSON, marshalled once.
type event struct {
	id      string
	typ     string // SHIPMENT, TRANSPORT, EQUIPMENT
	code    string // its shipment, transport or equipment event type code
	box     string // equipmentReference of an equipment event
	class   string // ACT, EST, PLN
	at      time.Time
	created time.Time
	raw     json.RawMessage
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// buildEvents writes every event that will ever happen to s. Transport
// events (per call: departure and arrival) start at the manifest with a
// planned (PLN) and an estimated (EST) time; the estimate moves towards the
// actual time in 12-hour steps as the day approaches (each move a new EST
// event with a new id); the actual (ACT) event is created minutes after it
// happens. Equipment events are actual ones per container; shipment events
// say the booking is confirmed and the transport document issued.
func buildEvents(seed int64, r *rand.Rand, s *shipment) []*event {
	key := s.line.scac + "/" + s.bl
	docRefs := []jsonDocRef{{"BKG", s.booking}, {"TRD", s.bl}}
	var refs []jsonReference
	if r.IntN(2) == 0 {
		refs = []jsonReference{{"PO", fmt.Sprintf("PO%08d", r.IntN(100_000_000))}}
	}
	var out []*event
	add := func(ekey string, je jsonEvent, at, created time.Time) {
		je.EventID = stableID(seed, key+"/"+ekey)
		je.EventDateTime, je.EventCreatedDateTime = stamp(at), stamp(created)
		raw, err := json.Marshal(je)
		if err != nil {
			panic(err) // plain structs of strings: cannot fail
		}
		code := je.ShipmentEventTypeCode + je.TransportEventTypeCode + je.EquipmentEventTypeCode
		out = append(out, &event{id: je.EventID, typ: je.EventType, code: code, box: je.EquipmentReference,
			class: je.EventClassifierCode, at: at, created: created, raw: raw})
	}
	lag := func() time.Duration { return time.Duration(10+r.IntN(50)) * time.Minute }

	// Shipment events: the booking confirmed, the transport document issued.
	add("CONF", jsonEvent{EventType: "SHIPMENT", EventClassifierCode: "ACT", ShipmentEventTypeCode: "CONF",
		DocumentTypeCode: "BKG", DocumentID: s.booking, Reason: "Booking confirmed", References: refs}, s.booked, s.booked)

	// Equipment events per container.
	var firstGateIn time.Time
	for ci, c := range s.containers {
		step := time.Duration(ci)
		t0 := s.manifest.Add(step * 3 * time.Hour)
		box := func(ekey, code, empty string, at time.Time, loc *jsonLocation, tc *jsonCall, seals bool) {
			je := jsonEvent{EventType: "EQUIPMENT", EventClassifierCode: "ACT", EquipmentEventTypeCode: code,
				EquipmentReference: c.number, ISOEquipmentCode: c.iso, EmptyIndicatorCode: empty,
				EventLocation: loc, TransportCall: tc, DocumentReferences: docRefs, References: refs}
			if seals {
				je.Seals = []jsonSeal{{SealNumber: c.seal, SealSource: "CAR", SealType: "BLT"}}
			}
			add(c.number+"/"+ekey, je, at, at.Add(lag()))
		}
		origin := s.legs[0].from
		box("GTOT-EMPTY", "GTOT", "EMPTY", t0, portLocation(origin.port, terminal{}), nil, false)
		gateIn := t0.Add(48 * time.Hour)
		if ci == 0 {
			firstGateIn = gateIn
		}
		box("GTIN-LADEN", "GTIN", "LADEN", gateIn, portLocation(origin.port, origin.terminal), nil, true)
		var disc time.Time
		for k := range s.legs {
			lg := &s.legs[k]
			load := lg.from.actual.Add(-8 * time.Hour).Add(step * 30 * time.Minute)
			box(fmt.Sprintf("LOAD-%d", k), "LOAD", "LADEN", load, portLocation(lg.from.port, lg.from.terminal), transportCall(s, lg, true), true)
			disc = lg.to.actual.Add(6 * time.Hour).Add(step * 30 * time.Minute)
			box(fmt.Sprintf("DISC-%d", k), "DISC", "LADEN", disc, portLocation(lg.to.port, lg.to.terminal), transportCall(s, lg, false), true)
		}
		last := s.legs[len(s.legs)-1]
		gateOut := disc.Add(48*time.Hour + step*5*time.Hour)
		if last.mode == "RAIL" {
			gateOut = disc.Add(20 * time.Hour)
		}
		box("GTOT-LADEN", "GTOT", "LADEN", gateOut, portLocation(last.to.port, last.to.terminal), nil, true)
		box("GTIN-EMPTY", "GTIN", "EMPTY", gateOut.Add(96*time.Hour), portLocation(last.to.port, terminal{}), nil, false)
	}
	s.issued = firstGateIn.Add(6 * time.Hour)
	add("ISSU", jsonEvent{EventType: "SHIPMENT", EventClassifierCode: "ACT", ShipmentEventTypeCode: "ISSU",
		DocumentTypeCode: "TRD", DocumentID: s.bl, Reason: "Transport document issued", References: refs}, s.issued, s.issued)

	// Transport events per call.
	for k := range s.legs {
		lg := &s.legs[k]
		for _, end := range []struct {
			code string
			c    call
			from bool
		}{{"DEPA", lg.from, true}, {"ARRI", lg.to, false}} {
			tc := transportCall(s, lg, end.from)
			base := func(class string) jsonEvent {
				return jsonEvent{EventType: "TRANSPORT", EventClassifierCode: class, TransportEventTypeCode: end.code,
					TransportCall: tc, DocumentReferences: docRefs, References: refs}
			}
			ekey := fmt.Sprintf("%s-%d", end.code, k)
			planned, actual := end.c.planned, end.c.actual
			add(ekey+"/PLN", base("PLN"), planned, s.manifest)
			delay := actual.Sub(planned)
			total := actual.Sub(s.manifest)
			var last time.Time
			for rev, at := 0, s.manifest; at.Before(actual.Add(-2 * time.Hour)); rev, at = rev+1, at.Add(24*time.Hour) {
				frac := 1.5 * float64(at.Sub(s.manifest)) / float64(total)
				est := delay
				if frac < 1 {
					est = time.Duration(float64(delay) * frac).Truncate(12 * time.Hour)
				}
				if rev > 0 && planned.Add(est).Equal(last) {
					continue
				}
				last = planned.Add(est)
				je := base("EST")
				if est != 0 {
					je.DelayReasonCode, je.ChangeRemark = lg.delay.code, lg.delay.remark
				}
				add(fmt.Sprintf("%s/EST/%d", ekey, rev), je, last, at)
			}
			je := base("ACT")
			if delay != 0 {
				je.DelayReasonCode, je.ChangeRemark = lg.delay.code, lg.delay.remark
			}
			add(ekey+"/ACT", je, actual, actual.Add(lag()))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].created.Equal(out[j].created) {
			return out[i].created.Before(out[j].created)
		}
		return out[i].id < out[j].id
	})
	return out
}

func portLocation(p *port, t terminal) *jsonLocation {
	loc := &jsonLocation{LocationName: p.name, Latitude: p.lat, Longitude: p.long, UNLocationCode: p.code, FacilityCode: t.firms}
	if t.name != "" {
		loc.LocationName = t.name
	}
	return loc
}

// transportCall is the DCSA transport call of one end of a leg.
func transportCall(s *shipment, lg *leg, from bool) *jsonCall {
	c, seq := lg.to, lg.seqTo
	if from {
		c, seq = lg.from, lg.seqFrom
	}
	tc := &jsonCall{
		TransportCallID: c.id, TransportCallSequenceNumber: seq, UNLocationCode: c.port.code,
		FacilityCode: c.terminal.firms, FacilityTypeCode: "POTE", ModeOfTransport: lg.mode,
		Location: portLocation(c.port, c.terminal),
	}
	if lg.mode == "RAIL" {
		tc.ExportVoyageNumber = lg.voyage
		if !from {
			tc.FacilityTypeCode = "RAMP"
		}
		return tc
	}
	tc.CarrierServiceCode, tc.ExportVoyageNumber, tc.ImportVoyageNumber = lg.service, lg.voyage, lg.voyage
	tc.Vessel = &jsonVessel{VesselIMONumber: lg.vessel.imo, VesselName: lg.vessel.name, VesselFlag: lg.vessel.flag,
		VesselCallSignNumber: lg.vessel.callSign, VesselOperatorCarrierCode: s.line.scac, VesselOperatorCarrierCodeListProvider: "NMFTA"}
	return tc
}
