package rest

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"shipgraph/model"
)

// The JSON writer of documents. It appends to a byte slice exactly what
// encoding/json writes with HTML escaping off, without reflection: a page
// of a hundred documents with their shipments and containers has some
// fifteen thousand attribute values, and encoding/json's reflection over
// the attribute structs was a quarter of the server's CPU on such a page.
// Attribute structs of the resource types a list renders in bulk implement
// attributeWriter; the others go through encoding/json (value). The tests
// (encode_internal_test.go) compare both writers byte for byte.

// encoder appends one document to b; err is the first value that cannot
// be written (a NaN, say), as encoding/json would refuse it.
type encoder struct {
	b   []byte
	err error

	// attrs writes the attributes of the current resource (here rather
	// than on the stack: the writers take it through an interface).
	attrs attrs

	// fallback writes the values that have no writer of their own.
	fallback    *json.Encoder
	fallbackBuf bytes.Buffer
}

// value appends v as encoding/json writes it (HTML escaping off).
func (e *encoder) value(v any) {
	if e.fallback == nil {
		e.fallback = json.NewEncoder(&e.fallbackBuf)
		e.fallback.SetEscapeHTML(false)
	}
	e.fallbackBuf.Reset()
	if err := e.fallback.Encode(v); err != nil {
		e.fail(err)
		return
	}
	out := e.fallbackBuf.Bytes()
	e.b = append(e.b, out[:len(out)-1]...) // Encode ends with a newline
}

func (e *encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// attributeWriter is an attributes struct that writes itself: each member
// through the attrs methods, in the struct's order and with its json names.
type attributeWriter interface {
	writeAttributes(a *attrs)
}

// attrs writes the members of one attributes object; keep, when non-nil,
// is the sparse fieldset: members it does not name are left out.
type attrs struct {
	e    *encoder
	keep map[string]bool
	n    int // members written
}

// member writes the name of the next member and reports whether to write
// its value (false: the fieldset leaves it out).
func (a *attrs) member(name string) bool {
	if a.keep != nil && !a.keep[name] {
		return false
	}
	if a.n > 0 {
		a.e.b = append(a.e.b, ',')
	}
	a.n++
	// Member names are the writers' constants: plain ASCII.
	a.e.b = append(a.e.b, '"')
	a.e.b = append(a.e.b, name...)
	a.e.b = append(a.e.b, '"', ':')
	return true
}

func (a *attrs) str(name, v string) {
	if a.member(name) {
		a.e.b = appendString(a.e.b, v)
	}
}

func (a *attrs) strp(name string, v *string) {
	if a.member(name) {
		a.e.b = appendStringp(a.e.b, v)
	}
}

// strpOmit is strp for an omitempty member: nil is left out.
func (a *attrs) strpOmit(name string, v *string) {
	if v != nil {
		a.strp(name, v)
	}
}

func (a *attrs) strs(name string, v []string) {
	if a.member(name) {
		a.e.b = appendStrings(a.e.b, v)
	}
}

func (a *attrs) time(name string, v timestamp) {
	if a.member(name) {
		a.e.b = appendTime(a.e.b, v)
	}
}

func (a *attrs) timep(name string, v *timestamp) {
	if a.member(name) {
		a.e.b = appendTimep(a.e.b, v)
	}
}

func (a *attrs) boolean(name string, v bool) {
	if a.member(name) {
		a.e.b = strconv.AppendBool(a.e.b, v)
	}
}

func (a *attrs) boolp(name string, v *bool) {
	if a.member(name) {
		if v == nil {
			a.e.b = append(a.e.b, "null"...)
		} else {
			a.e.b = strconv.AppendBool(a.e.b, *v)
		}
	}
}

func (a *attrs) intp(name string, v *int) {
	if a.member(name) {
		if v == nil {
			a.e.b = append(a.e.b, "null"...)
		} else {
			a.e.b = strconv.AppendInt(a.e.b, int64(*v), 10)
		}
	}
}

func (a *attrs) int64p(name string, v *int64) {
	if a.member(name) {
		if v == nil {
			a.e.b = append(a.e.b, "null"...)
		} else {
			a.e.b = strconv.AppendInt(a.e.b, *v, 10)
		}
	}
}

func (a *attrs) float64p(name string, v *float64) {
	if a.member(name) {
		if v == nil {
			a.e.b = append(a.e.b, "null"...)
		} else {
			a.e.b = a.e.appendFloat(a.e.b, *v)
		}
	}
}

// appendString appends s as a JSON string, as encoding/json writes it with
// HTML escaping off: ", \ and control characters escaped (\b \f \n \r \t
// by name), invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	// Most strings (ids, links, codes) need no escaping: skip eight bytes
	// at a time while none of them does.
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if special(x) {
			break
		}
	}
	start := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// special reports whether any of the eight bytes of x is below 0x20, a
// quote, a backslash or not ASCII (the bit tricks of "Bit Twiddling
// Hacks": a byte below n, a zero byte after xor).
func special(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (x - 0x20*ones) &^ x
	quote := x ^ ('"' * ones)
	quote = (quote - ones) &^ quote
	backslash := x ^ ('\\' * ones)
	backslash = (backslash - ones) &^ backslash
	return (below|quote|backslash|x)&highs != 0
}

func appendStringp(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

// appendStrings writes a string list; nil is null, as encoding/json has it.
func appendStrings(b []byte, v []string) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendTime writes what timestamp.MarshalText gives, quoted.
func appendTime(b []byte, t timestamp) []byte {
	b = append(b, '"')
	b = time.Time(t).UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

func appendTimep(b []byte, t *timestamp) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return appendTime(b, *t)
}

// appendFloat writes f as encoding/json writes a float64: the shortest
// representation, in exponent form below 1e-6 and from 1e21; NaN and the
// infinities are an error.
func (e *encoder) appendFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		e.fail(&json.UnsupportedValueError{Str: strconv.FormatFloat(f, 'g', -1, 64)})
		return append(b, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9, as encoding/json has it
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendLinks writes a links object; members without a link are left out.
func appendLinks(b []byte, l *Links) []byte {
	b = append(b, '{')
	n := 0
	add := func(name, v string) {
		if v == "" {
			return
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		b = appendString(b, v)
	}
	add("self", l.Self)
	add("download", l.Download)
	add("first", l.First)
	add("prev", l.Prev)
	add("next", l.Next)
	add("last", l.Last)
	return append(b, '}')
}

func appendMeta(b []byte, m *Meta) []byte {
	b = append(b, `{"size":`...)
	b = strconv.AppendInt(b, int64(m.Size), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(m.Total), 10)
	return append(b, '}')
}

// The writers of the attribute structs. Each writes every member of its
// struct in order, with the struct's json name.

func (v documentAttributes) writeAttributes(a *attrs) {
	a.str("id", v.ID)
	a.str("name", v.Name)
	a.str("document_type", v.DocumentType)
	a.strp("document_type_manual", v.DocumentTypeManual)
	a.strp("classification_notes", v.ClassificationNotes)
	a.str("source", string(v.Source))
	a.str("file_name", v.FileName)
	a.strp("file_content_type", v.FileContentType)
	a.int64p("file_size_bytes", v.FileSizeBytes)
	a.time("created_at", v.CreatedAt)
	a.time("updated_at", v.UpdatedAt)
}

func (v accountAttributes) writeAttributes(a *attrs) {
	a.str("company_name", v.CompanyName)
}

func (v userAttributes) writeAttributes(a *attrs) {
	a.str("email", v.Email)
	a.str("first_name", v.FirstName)
	a.str("last_name", v.LastName)
	a.time("created_at", v.CreatedAt)
}

func (v shipmentAttributes) writeAttributes(a *attrs) {
	a.str("bill_of_lading_number", v.BillOfLadingNumber)
	a.str("normalized_number", v.NormalizedNumber)
	a.strs("ref_numbers", v.RefNumbers)
	a.time("created_at", v.CreatedAt)
	a.strs("tags", v.Tags)
	a.strp("port_of_lading_locode", v.PortOfLadingLocode)
	a.strp("port_of_lading_name", v.PortOfLadingName)
	a.strp("port_of_discharge_locode", v.PortOfDischargeLocode)
	a.strp("port_of_discharge_name", v.PortOfDischargeName)
	a.strp("destination_locode", v.DestinationLocode)
	a.strp("destination_name", v.DestinationName)
	a.str("shipping_line_scac", v.ShippingLineScac)
	a.str("shipping_line_name", v.ShippingLineName)
	a.str("shipping_line_short_name", v.ShippingLineShortName)
	a.strp("customer_name", v.CustomerName)
	a.strp("pod_vessel_name", v.PodVesselName)
	a.strp("pod_vessel_imo", v.PodVesselImo)
	a.strp("pod_voyage_number", v.PodVoyageNumber)
	a.timep("pol_etd_at", v.PolEtdAt)
	a.timep("pol_atd_at", v.PolAtdAt)
	a.timep("pod_eta_at", v.PodEtaAt)
	a.timep("pod_original_eta_at", v.PodOriginalEtaAt)
	a.timep("pod_ata_at", v.PodAtaAt)
	a.timep("destination_eta_at", v.DestinationEtaAt)
	a.timep("destination_ata_at", v.DestinationAtaAt)
	a.strp("pol_timezone", v.PolTimezone)
	a.strp("pod_timezone", v.PodTimezone)
	a.strp("destination_timezone", v.DestinationTimezone)
	a.timep("line_tracking_last_attempted_at", v.LineTrackingLastAttemptedAt)
	a.timep("line_tracking_last_succeeded_at", v.LineTrackingLastSucceededAt)
	a.timep("line_tracking_stopped_at", v.LineTrackingStoppedAt)
	a.strp("line_tracking_stopped_reason", (*string)(v.LineTrackingStoppedReason))
}

func (v containerAttributes) writeAttributes(a *attrs) {
	a.str("number", v.Number)
	a.strs("ref_numbers", v.RefNumbers)
	a.strp("equipment_type", (*string)(v.EquipmentType))
	a.intp("equipment_length", v.EquipmentLength)
	a.strp("equipment_height", (*string)(v.EquipmentHeight))
	a.float64p("weight_in_lbs", v.WeightInLbs)
	a.time("created_at", v.CreatedAt)
	a.strp("seal_number", v.SealNumber)
	a.timep("pickup_lfd", v.PickupLfd)
	a.timep("pickup_appointment_at", v.PickupAppointmentAt)
	a.boolean("availability_known", v.AvailabilityKnown)
	a.boolp("available_for_pickup", v.AvailableForPickup)
	a.timep("pod_arrived_at", v.PodArrivedAt)
	a.timep("pod_discharged_at", v.PodDischargedAt)
	a.timep("pod_full_out_at", v.PodFullOutAt)
	a.timep("terminal_checked_at", v.TerminalCheckedAt)
	a.strp("pod_full_out_chassis_number", v.PodFullOutChassisNumber)
	a.strp("location_at_pod_terminal", v.LocationAtPodTerminal)
	a.timep("final_destination_full_out_at", v.FinalDestinationFullOutAt)
	a.timep("empty_terminated_at", v.EmptyTerminatedAt)
	if a.member("holds_at_pod_terminal") {
		a.e.b = appendHolds(a.e.b, v.HoldsAtPodTerminal)
	}
	if a.member("fees_at_pod_terminal") {
		a.e.b = a.e.appendFees(a.e.b, v.FeesAtPodTerminal)
	}
	a.strp("pod_timezone", v.PodTimezone)
	a.strp("final_destination_timezone", v.FinalDestinationTimezone)
	a.strp("empty_terminated_timezone", v.EmptyTerminatedTimezone)
	a.strp("pod_rail_carrier_scac", v.PodRailCarrierScac)
	a.strp("ind_rail_carrier_scac", v.IndRailCarrierScac)
	a.timep("pod_last_tracking_request_at", v.PodLastTrackingRequestAt)
	a.timep("shipment_last_tracking_request_at", v.ShipmentLastTrackingRequestAt)
	a.timep("pod_rail_loaded_at", v.PodRailLoadedAt)
	a.timep("pod_rail_departed_at", v.PodRailDepartedAt)
	a.timep("ind_eta_at", v.IndEtaAt)
	a.timep("ind_ata_at", v.IndAtaAt)
	a.timep("ind_rail_unloaded_at", v.IndRailUnloadedAt)
	a.timep("ind_facility_lfd_on", v.IndFacilityLfdOn)
	if a.member("import_deadlines") {
		a.e.b = appendDeadlines(a.e.b, v.ImportDeadlines)
	}
	a.str("current_status", string(v.CurrentStatus))
}

// appendHolds writes holds as encoding/json writes []model.TerminalHold.
func appendHolds(b []byte, holds []model.TerminalHold) []byte {
	if holds == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, h := range holds {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendString(b, h.Name)
		b = append(b, `,"status":`...)
		b = appendString(b, string(h.Status))
		b = append(b, `,"description":`...)
		b = appendStringp(b, h.Description)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendFees writes fees as encoding/json writes []model.TerminalFee.
func (e *encoder) appendFees(b []byte, fees []model.TerminalFee) []byte {
	if fees == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, f := range fees {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"type":`...)
		b = appendString(b, string(f.Type))
		b = append(b, `,"amount":`...)
		b = e.appendFloat(b, f.Amount)
		b = append(b, `,"currency_code":`...)
		b = appendString(b, f.CurrencyCode)
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendDeadlines(b []byte, d *importDeadlines) []byte {
	if d == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"pickup_lfd_terminal":`...)
	b = appendTimep(b, d.PickupLfdTerminal)
	b = append(b, `,"pickup_lfd_rail":`...)
	b = appendTimep(b, d.PickupLfdRail)
	b = append(b, `,"pickup_lfd_line":`...)
	b = appendTimep(b, d.PickupLfdLine)
	return append(b, '}')
}

func (v terminalAttributes) writeAttributes(a *attrs) {
	a.str("name", v.Name)
	a.strpOmit("nickname", v.Nickname)
	a.strpOmit("firms_code", v.FirmsCode)
	a.strpOmit("smdg_code", v.SmdgCode)
	a.strpOmit("bic_facility_code", v.BicFacilityCode)
	a.strpOmit("street", v.Street)
	a.strpOmit("city", v.City)
	a.strpOmit("state", v.State)
	a.strpOmit("state_abbr", v.StateAbbr)
	a.strpOmit("zip", v.Zip)
	a.strpOmit("country", v.Country)
}

func (v portAttributes) writeAttributes(a *attrs) {
	a.str("name", v.Name)
	a.str("code", v.Code)
	a.strp("state_abbr", v.StateAbbr)
	a.strp("city", v.City)
	a.str("country_code", v.CountryCode)
	a.str("time_zone", v.TimeZone)
	a.float64p("latitude", v.Latitude)
	a.float64p("longitude", v.Longitude)
}
