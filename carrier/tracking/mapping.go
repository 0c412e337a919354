package tracking

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sort"
	"time"
	"unicode/utf8"

	"shipgraph/carrier/dcsa"
	"shipgraph/db"
	"shipgraph/model"
)

// Place is where a call sits in the route, as the events tell it: the
// port of lading, a transshipment port between, the port of discharge, or
// inland beyond it (rail, truck).
type Place int

const (
	AtOrigin Place = iota + 1
	AtTransshipment
	AtDischarge
	Inland
)

// Act is what happened, read from the DCSA codes: the transport event type
// (ARRI, DEPA), or the equipment event type with its empty indicator.
type Act string

const (
	ActArrive       Act = "ARRI"
	ActDepart       Act = "DEPA"
	ActLoad         Act = "LOAD"
	ActDischarge    Act = "DISC"
	ActGateInFull   Act = "GTIN/LADEN"
	ActGateInEmpty  Act = "GTIN/EMPTY"
	ActGateOutFull  Act = "GTOT/LADEN"
	ActGateOutEmpty Act = "GTOT/EMPTY"
	ActDropFull     Act = "DROP/LADEN"
)

// leg is the kind of leg a call belongs to: mainline vessel, feeder
// (BARGE), or rail; trucks and gates carry no leg.
type leg string

const (
	legVessel leg = "VESSEL"
	legFeeder leg = "BARGE"
	legRail   leg = "RAIL"
	legNone   leg = ""
)

type mapKey struct {
	act   Act
	leg   leg
	place Place // 0: anywhere
}

// eventName is the public names of one row of the mapping table: the raw
// event, the transport event of an actual one and, when the public
// catalogue has one, the transport event of an estimated (EST, PLN) one.
type eventName struct {
	raw, transport, estimated string
}

// mapping is THE table from DCSA codes (act × leg × place in the route) to
// the public raw event and transport event names. The classifier picks the
// column: ACT → transport, EST/PLN → estimated (raw events keep the
// estimate, flagged estimated, whatever the column says). A combination
// not in the table (a vessel arriving at its port of lading, a stuffing, a
// shipment event) is not stored: the public catalogue has no name for it.
var mapping = map[mapKey]eventName{
	{ActGateOutEmpty, legNone, 0}: {"empty_out", "container.transport.empty_out", ""},
	{ActGateInFull, legNone, 0}:   {"full_in", "container.transport.full_in", ""},

	{ActLoad, legVessel, AtOrigin}:         {"vessel_loaded", "container.transport.vessel_loaded", ""},
	{ActDepart, legVessel, AtOrigin}:       {"vessel_departed", "container.transport.vessel_departed", "container.transport.estimated.vessel_departed"},
	{ActArrive, legVessel, AtDischarge}:    {"vessel_arrived", "container.transport.vessel_arrived", "container.transport.estimated.vessel_arrived"},
	{ActDischarge, legVessel, AtDischarge}: {"vessel_discharged", "container.transport.vessel_discharged", ""},

	{ActArrive, legVessel, AtTransshipment}:    {"transshipment_arrived", "container.transport.transshipment_arrived", ""},
	{ActDischarge, legVessel, AtTransshipment}: {"transshipment_discharged", "container.transport.transshipment_discharged", ""},
	{ActLoad, legVessel, AtTransshipment}:      {"transshipment_loaded", "container.transport.transshipment_loaded", ""},
	{ActDepart, legVessel, AtTransshipment}:    {"transshipment_departed", "container.transport.transshipment_departed", ""},

	{ActArrive, legFeeder, 0}:    {"feeder_arrived", "container.transport.feeder_arrived", ""},
	{ActDischarge, legFeeder, 0}: {"feeder_discharged", "container.transport.feeder_discharged", ""},
	{ActLoad, legFeeder, 0}:      {"feeder_loaded", "container.transport.feeder_loaded", ""},
	{ActDepart, legFeeder, 0}:    {"feeder_departed", "container.transport.feeder_departed", ""},

	{ActLoad, legRail, 0}:      {"rail_loaded", "container.transport.rail_loaded", ""},
	{ActDepart, legRail, 0}:    {"rail_departed", "container.transport.rail_departed", ""},
	{ActArrive, legRail, 0}:    {"rail_arrived", "container.transport.rail_arrived", "container.transport.estimated.arrived_at_inland_destination"},
	{ActDischarge, legRail, 0}: {"rail_unloaded", "container.transport.rail_unloaded", ""},

	{ActGateOutFull, legNone, 0}: {"full_out", "container.transport.full_out", ""},
	{ActGateInEmpty, legNone, 0}: {"empty_in", "container.transport.empty_in", ""},
	{ActDropFull, legNone, 0}:    {"delivered", "container.transport.delivered", ""},
}

// statusAfter is a container's current_status after its latest actual
// event of each raw name (one table with the status history's).
var statusAfter = func() map[string]string {
	m := make(map[string]string, len(model.ContainerStatusAfter))
	for raw, s := range model.ContainerStatusAfter {
		m[raw] = string(s)
	}
	return m
}()

// equipment maps an ISO 6346 size-type code (22G1, 45R1, L5G1 …) to the
// container's type, length and height.
func equipment(iso string) (typ *string, length *int, height *string) {
	if len(iso) != 4 {
		return nil, nil, nil
	}
	if l, ok := map[byte]int{'1': 10, '2': 20, '4': 40, 'L': 45}[iso[0]]; ok {
		length = &l
	}
	switch iso[1] {
	case '0', '2':
		h := "standard"
		height = &h
	case '5':
		h := "high_cube"
		height = &h
	}
	if t, ok := map[byte]string{'G': "dry", 'V': "dry", 'R': "reefer", 'U': "open top", 'P': "flat rack", 'T': "tank", 'B': "bulk"}[iso[2]]; ok {
		typ = &t
	}
	return typ, length, height
}

var imoPattern = regexp.MustCompile(`^[0-9]{7}$`)

func str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func tm(t time.Time) *time.Time { return &t }

// cells hands out the pointer fields of one poll's events from chunks
// shared by many of them: one allocation for dozens of fields instead of
// one a field (nine a stored event, most of a poll's allocations in
// mapEvents). A chunk lives as long as any of its fields, which the
// poll's write drops together.
type cells struct {
	strs  []string
	times []time.Time
}

func newCells(events int) *cells {
	return &cells{strs: make([]string, 0, 4*events), times: make([]time.Time, 0, events)}
}

// str is str(s) from a chunk: nil for "".
func (c *cells) str(s string) *string {
	if s == "" {
		return nil
	}
	if len(c.strs) == cap(c.strs) {
		c.strs = make([]string, 0, 64)
	}
	c.strs = append(c.strs, s)
	return &c.strs[len(c.strs)-1]
}

// tm is tm(t) from a chunk.
func (c *cells) tm(t time.Time) *time.Time {
	if len(c.times) == cap(c.times) {
		c.times = make([]time.Time, 0, 16)
	}
	c.times = append(c.times, t)
	return &c.times[len(c.times)-1]
}

// outcome is a carrier's answer mapped for the poll's write (apply.go).
type outcome struct {
	status   string // created, awaiting_manifest
	shipment *db.PolledShipment
	boxes    []db.PolledContainer
	events   []db.PolledEvent
	vessels  []db.PolledVessel
}

// call is one end of a leg, as the events show it.
type call struct {
	locode string
	leg    leg
	seq    int
	first  time.Time
}

func actOf(e *dcsa.Event) Act {
	switch e.EventType {
	case dcsa.EventTypeTransport:
		return Act(e.TransportEventTypeCode)
	case dcsa.EventTypeEquipment:
		switch e.EquipmentEventTypeCode {
		case dcsa.EquipmentLoaded, dcsa.EquipmentDischarged:
			return Act(e.EquipmentEventTypeCode)
		}
		return Act(string(e.EquipmentEventTypeCode) + "/" + string(e.EmptyIndicatorCode))
	}
	return ""
}

func locodeOf(e *dcsa.Event) string {
	if e.TransportCall != nil && e.TransportCall.UNLocationCode != "" {
		return e.TransportCall.UNLocationCode
	}
	if e.TransportCall != nil && e.TransportCall.Location != nil && e.TransportCall.Location.UNLocationCode != "" {
		return e.TransportCall.Location.UNLocationCode
	}
	if e.EventLocation != nil {
		return e.EventLocation.UNLocationCode
	}
	return ""
}

func facilityOf(e *dcsa.Event) string {
	if e.TransportCall != nil && e.TransportCall.FacilityCode != "" {
		return e.TransportCall.FacilityCode
	}
	if e.EventLocation != nil {
		return e.EventLocation.FacilityCode
	}
	return ""
}

func legOf(e *dcsa.Event) leg {
	if e.TransportCall == nil {
		return legNone
	}
	switch e.TransportCall.ModeOfTransport {
	case dcsa.ModeVessel:
		return legVessel
	case dcsa.ModeBarge:
		return legFeeder
	case dcsa.ModeRail:
		return legRail
	}
	return legNone
}

// route orders the calls of the events' vessel legs (by transport call
// sequence number, else by first time seen) and returns the place of each
// UN/LOCODE: the first vessel call is the origin, the last the port of
// discharge, those between transshipments; rail calls beyond are inland.
func route(events []dcsa.Event) (places map[string]Place, pol, pod, dest string) {
	calls := map[string]*call{}
	for i := range events {
		e := &events[i]
		lg := legOf(e)
		if lg != legVessel && lg != legRail {
			continue
		}
		loc := locodeOf(e)
		if loc == "" {
			continue
		}
		c := calls[loc+string(lg)]
		if c == nil {
			c = &call{locode: loc, leg: lg, seq: 1 << 30, first: e.EventDateTime}
			calls[loc+string(lg)] = c
		}
		if s := e.TransportCall.TransportCallSequenceNumber; s != nil && *s < c.seq {
			c.seq = *s
		}
		if e.EventDateTime.Before(c.first) {
			c.first = e.EventDateTime
		}
	}
	var vessel, rail []*call
	for _, c := range calls {
		if c.leg == legVessel {
			vessel = append(vessel, c)
		} else {
			rail = append(rail, c)
		}
	}
	order := func(cs []*call) {
		sort.Slice(cs, func(i, j int) bool {
			if !cs[i].first.Equal(cs[j].first) {
				return cs[i].first.Before(cs[j].first)
			}
			return cs[i].locode < cs[j].locode
		})
	}
	order(vessel)
	order(rail)
	places = map[string]Place{}
	for i, c := range vessel {
		switch {
		case i == 0:
			places[c.locode] = AtOrigin
			pol = c.locode
		case i == len(vessel)-1:
			places[c.locode] = AtDischarge
			pod = c.locode
		default:
			places[c.locode] = AtTransshipment
		}
	}
	for _, c := range rail {
		if _, ok := places[c.locode]; !ok {
			places[c.locode] = Inland
			dest = c.locode
		}
	}
	return places, pol, pod, dest
}

// latest keeps, per milestone, the value of the event created last.
type latest struct {
	at, created time.Time
	set         bool
}

func (l *latest) offer(e *dcsa.Event) {
	if !l.set || e.EventCreatedDateTime.After(l.created) ||
		(e.EventCreatedDateTime.Equal(l.created) && e.EventDateTime.After(l.at)) {
		l.at, l.created, l.set = e.EventDateTime, e.EventCreatedDateTime, true
	}
}

func (l *latest) ptr() *time.Time {
	if !l.set {
		return nil
	}
	return tm(l.at)
}

// estimateKey is what makes two estimates of a container the same one:
// their transport event, time and place.
type estimateKey struct {
	container, event string
	at               int64
	locode           string
}

// mapEvents maps a carrier's events of one request to what a poll writes.
// It reports found=false when nothing in them is about the request.
func mapEvents(requestType, number string, events []dcsa.Event) (outcome, bool) {
	if len(events) == 0 {
		return outcome{}, false
	}
	var o outcome
	places, pol, pod, dest := route(events)

	bl := billOfLading(requestType, number, events)

	order, iso := containersOf(requestType, number, events)
	if len(order) == 0 {
		o.status = "awaiting_manifest"
		return o, true
	}
	o.status = "created"

	sorted := timeOrder(events)
	ship := &db.PolledShipment{BillOfLadingNumber: bl, PolLocode: str(pol), PodLocode: str(pod), DestinationLocode: str(dest)}
	var polEtd, podEta, destEta latest
	vessels := map[string]db.PolledVessel{}
	type boxState struct {
		c         db.PolledContainer
		indEta    latest
		lastAct   string
		lastActAt time.Time
		loaded    bool
		pos       int
	}
	boxes := map[string]*boxState{}
	for _, n := range order {
		typ, length, height := equipment(iso[n])
		boxes[n] = &boxState{c: db.PolledContainer{Number: n, EquipmentType: typ, EquipmentLength: length, EquipmentHeight: height}}
	}
	estimates := map[estimateKey]bool{}
	cs := newCells(len(events))
	for _, e := range sorted {
		act, lg, loc := actOf(e), legOf(e), locodeOf(e)
		place := places[loc]
		if lg == legNone || lg == legRail || lg == legFeeder {
			if _, ok := mapping[mapKey{act, lg, 0}]; ok {
				place = 0
			}
		}
		name, ok := mapping[mapKey{act, lg, place}]
		if !ok {
			continue
		}
		estimated := e.EventClassifierCode != dcsa.ClassifierActual
		voyage, tv := voyageOf(e)
		if tv != nil {
			vessels[tv.IMO] = *tv
		}
		shipmentMilestone(ship, e, act, lg, place, loc, dest, estimated, tv, voyage, &polEtd, &podEta, &destEta)
		payload, err := payloadOf(e)
		if err != nil {
			continue
		}
		targets := order
		if e.EventType == dcsa.EventTypeEquipment {
			one := [1]string{e.EquipmentReference}
			targets = one[:]
		}
		// The event's fields, once for all its containers' rows (they
		// share the pointers; nothing writes through them).
		pe := db.PolledEvent{CarrierEventID: e.EventID, Event: name.raw,
			OriginalEvent: string(e.EventType) + " " + string(act) + " " + string(e.EventClassifierCode),
			Estimated:     estimated, EventAt: cs.tm(e.EventDateTime), Locode: cs.str(loc), Facility: cs.str(facilityOf(e)),
			VoyageNumber: cs.str(voyage), Payload: payload}
		if e.TransportCall != nil && e.TransportCall.Location != nil {
			pe.LocationName = cs.str(e.TransportCall.Location.LocationName)
		} else if e.EventLocation != nil {
			pe.LocationName = cs.str(e.EventLocation.LocationName)
		}
		if tv != nil {
			pe.VesselIMO, pe.VesselName = cs.str(tv.IMO), cs.str(tv.Name)
		}
		var transport *string
		if !estimated {
			transport = cs.str(name.transport)
		}
		for _, n := range targets {
			b := boxes[n]
			if b == nil {
				continue
			}
			pe := pe
			pe.ContainerNumber, pe.Position, pe.TransportEvent = n, b.pos, transport
			if estimated {
				// One estimate published again under another event
				// id is one transport event (its raw events stay).
				k := estimateKey{n, name.estimated, e.EventDateTime.UnixNano(), loc}
				if !estimates[k] {
					estimates[k] = true
					pe.TransportEvent = cs.str(name.estimated)
				}
			}
			b.pos++
			o.events = append(o.events, pe)
			if estimated {
				if act == ActArrive && lg == legRail && loc == dest {
					b.indEta.offer(e)
				}
				continue
			}
			containerMilestone(&b.c, act, lg, place, loc, pod, dest, b.loaded, pe.EventAt)
			if act == ActLoad {
				b.loaded = true
			}
			if !e.EventDateTime.Before(b.lastActAt) {
				b.lastAct, b.lastActAt = name.raw, e.EventDateTime
			}
		}
	}
	ship.PolEtdAt, ship.PodEtaAt, ship.DestinationEtaAt = polEtd.ptr(), podEta.ptr(), destEta.ptr()
	if dest == "" {
		ship.DestinationLocode = nil
	}
	o.shipment = ship
	for _, n := range order {
		b := boxes[n]
		b.c.IndEtaAt = b.indEta.ptr()
		if s, ok := statusAfter[b.lastAct]; ok {
			if b.lastAct == "vessel_discharged" && dest != "" {
				s = "awaiting_inland_transfer"
			}
			b.c.CurrentStatus = str(s)
		}
		o.boxes = append(o.boxes, b.c)
	}
	imos := make([]string, 0, len(vessels))
	for imo := range vessels {
		imos = append(imos, imo)
	}
	sort.Strings(imos)
	for _, imo := range imos {
		o.vessels = append(o.vessels, vessels[imo])
	}
	return o, true
}

// payloadOf is the JSON an event's raw row keeps: the carrier's own
// (dcsa.Event.Raw, as sent) where PostgreSQL's jsonb takes it as it is,
// else the event's JSON made again from what was decoded (as for an event
// without Raw).
func payloadOf(e *dcsa.Event) ([]byte, error) {
	if len(e.Raw) > 0 && jsonbSafe(e.Raw) {
		return e.Raw, nil
	}
	return json.Marshal(e)
}

// maxDepth is the deepest nesting of a carrier's payload stored as sent.
const maxDepth = 32

// jsonbSafe reports whether valid JSON b is taken by PostgreSQL's jsonb as
// it is, conservatively: what Go's decoder accepts and jsonb may refuse
// is made again instead (json.Marshal writes only what was decoded, in
// valid UTF-8). Refused here: invalid UTF-8 (Go decodes it as U+FFFD;
// PostgreSQL refuses it), any \u escape (a lone surrogate is refused by
// jsonb; Go decodes it as U+FFFD), a number with an exponent or over 64
// characters (jsonb's numeric refuses exponents past ±1000 and 131,072
// digits), nesting deeper than maxDepth (PostgreSQL's stack depth).
func jsonbSafe(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	depth, num, inString := 0, 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			// To the string's next backslash or its closing quote at
			// once (IndexByte's vector search, not a byte at a time:
			// most of an event's bytes are in its strings).
			q := bytes.IndexByte(b[i:], '"')
			if q < 0 {
				q = len(b) - i
			}
			if k := bytes.IndexByte(b[i:i+q], '\\'); k >= 0 {
				i += k
				if i+1 < len(b) && b[i+1] == 'u' {
					return false
				}
				i++ // the escaped byte (a quote, too)
				continue
			}
			i += q
			inString = false
			continue
		}
		switch {
		case c == '"':
			inString, num = true, 0
		case c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.':
			if num++; num > 64 {
				return false
			}
		case (c == 'e' || c == 'E') && num > 0:
			return false
		case c == '{' || c == '[':
			if depth++; depth > maxDepth {
				return false
			}
			num = 0
		case c == '}' || c == ']':
			depth, num = depth-1, 0
		default:
			num = 0
		}
	}
	return true
}

// billOfLading is the shipment's number: the request's for a bill of
// lading request, else the transport document the events name, else the
// booking, else the number asked.
func billOfLading(requestType, number string, events []dcsa.Event) string {
	bl, booking := "", ""
	for i := range events {
		e := &events[i]
		for _, r := range e.DocumentReferences {
			switch r.DocumentReferenceType {
			case dcsa.DocumentReferenceTransportDocument:
				bl = r.DocumentReferenceValue
			case dcsa.DocumentReferenceBooking:
				booking = r.DocumentReferenceValue
			}
		}
		if e.EventType == dcsa.EventTypeShipment {
			switch e.DocumentTypeCode {
			case dcsa.DocumentTransportDocument:
				bl = e.DocumentID
			case dcsa.DocumentBooking:
				booking = e.DocumentID
			}
		}
	}
	if requestType == "bill_of_lading" {
		bl = number
	}
	if bl == "" {
		bl = booking
	}
	if bl == "" {
		bl = number
	}
	return bl
}

// containersOf is the request's containers in the order first met (a
// container request: that one only) and their ISO size-type codes.
func containersOf(requestType, number string, events []dcsa.Event) (order []string, iso map[string]string) {
	iso = map[string]string{}
	for i := range events {
		e := &events[i]
		if e.EventType != dcsa.EventTypeEquipment || e.EquipmentReference == "" {
			continue
		}
		if requestType == "container" && e.EquipmentReference != number {
			continue
		}
		if _, ok := iso[e.EquipmentReference]; !ok {
			order = append(order, e.EquipmentReference)
		}
		if e.ISOEquipmentCode != "" {
			iso[e.EquipmentReference] = e.ISOEquipmentCode
		}
	}
	return order, iso
}

// timeOrder is the events by time, then event id.
func timeOrder(events []dcsa.Event) []*dcsa.Event {
	sorted := make([]*dcsa.Event, len(events))
	for i := range events {
		sorted[i] = &events[i]
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		if !sorted[i].EventDateTime.Equal(sorted[j].EventDateTime) {
			return sorted[i].EventDateTime.Before(sorted[j].EventDateTime)
		}
		return sorted[i].EventID < sorted[j].EventID
	})
	return sorted
}

// voyageOf is the voyage of an event's transport call (import, else
// export, else the carrier's) and its vessel when it has a valid IMO.
func voyageOf(e *dcsa.Event) (voyage string, tv *db.PolledVessel) {
	tc := e.TransportCall
	if tc == nil {
		return "", nil
	}
	voyage = tc.ImportVoyageNumber
	if voyage == "" {
		voyage = tc.ExportVoyageNumber
	}
	if voyage == "" {
		voyage = tc.CarrierVoyageNumber
	}
	if v := tc.Vessel; v != nil && imoPattern.MatchString(v.VesselIMONumber) {
		pv := db.PolledVessel{IMO: v.VesselIMONumber, Name: v.VesselName, CallSign: str(v.VesselCallSignNumber), Flag: str(v.VesselFlag)}
		if pv.Name == "" {
			pv.Name = pv.IMO
		}
		tv = &pv
	}
	return voyage, tv
}

// shipmentMilestone writes what a transport event says of the shipment:
// departure from the origin, arrival at the port of discharge (with the
// vessel, voyage and terminal there), arrival at the inland destination;
// estimates go to their latest.
func shipmentMilestone(ship *db.PolledShipment, e *dcsa.Event, act Act, lg leg, place Place, loc, dest string, estimated bool,
	tv *db.PolledVessel, voyage string, polEtd, podEta, destEta *latest) {
	if e.EventType != dcsa.EventTypeTransport {
		return
	}
	switch {
	case act == ActDepart && lg == legVessel && place == AtOrigin:
		if estimated {
			polEtd.offer(e)
		} else {
			ship.PolAtdAt = tm(e.EventDateTime)
		}
	case act == ActArrive && lg == legVessel && place == AtDischarge:
		if estimated {
			podEta.offer(e)
		} else {
			ship.PodAtaAt = tm(e.EventDateTime)
		}
		if tv != nil {
			ship.VesselName, ship.VesselIMO = str(tv.Name), str(tv.IMO)
		}
		ship.VoyageNumber = str(voyage)
		ship.PodFacility = str(facilityOf(e))
	case act == ActArrive && lg == legRail && loc == dest:
		if estimated {
			destEta.offer(e)
		} else {
			ship.DestinationAtaAt = tm(e.EventDateTime)
		}
	}
}

// containerMilestone writes what an actual event says of a container.
func containerMilestone(c *db.PolledContainer, act Act, lg leg, place Place, loc, pod, dest string, loaded bool, at *time.Time) {
	switch {
	case act == ActArrive && lg == legVessel && place == AtDischarge:
		c.PodArrivedAt = at
	case act == ActDischarge && lg == legVessel && place == AtDischarge:
		c.PodDischargedAt = at
	case act == ActGateOutFull && (loc == pod || pod == ""):
		c.PodFullOutAt = at
	case act == ActGateInEmpty && loaded:
		c.EmptyTerminatedAt = at
	case act == ActLoad && lg == legRail:
		c.PodRailLoadedAt = at
	case act == ActDepart && lg == legRail && loc == pod:
		c.PodRailDepartedAt = at
	case act == ActArrive && lg == legRail && loc == dest:
		c.IndAtaAt = at
	}
}
