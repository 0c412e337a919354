package docproc

import (
	"regexp"
	"slices"
	"strings"

	"shipgraph/carrier/numbers"
)

// References are the numbers found in a text that can link a document to
// the account's records: bills of lading and bookings (normalised as
// carriers key them) and ISO 6346 container numbers whose check digit
// holds.
type References struct {
	BillsOfLading []string `json:"bill_of_lading_numbers"`
	Bookings      []string `json:"booking_numbers"`
	Containers    []string `json:"container_numbers"`
}

// Numbers are every bill of lading and booking number, the candidates a
// shipment's numbers are compared with.
func (r References) Numbers() []string {
	out := append(append([]string{}, r.BillsOfLading...), r.Bookings...)
	slices.Sort(out)
	return slices.Compact(out)
}

var (
	// An owner code (three letters and U, J or Z), six digits and the check
	// digit, with the separators people print ("MSCU 123456-7").
	containerRe = regexp.MustCompile(`\b([A-Za-z]{3}[UJZujz])[ \-.]?(\d{6})[ \-.]?(\d)\b`)
	// A label, then the number on the same line.
	bolRe     = regexp.MustCompile(`(?i)\b(?:b\s*/\s*l|bill\s+of\s+lading|waybill|mbl|hbl|bol)\s*(?:no\.?|number|nr\.?|#)?\s*[:#.]?\s*([A-Z0-9][A-Z0-9\- ]{3,24}[A-Z0-9])`)
	bookingRe = regexp.MustCompile(`(?i)\bbooking\s*(?:no\.?|number|nr\.?|ref(?:erence)?|#)?\s*[:#.]?\s*([A-Z0-9][A-Z0-9\-]{2,22}[A-Z0-9])`)
	// A carrier's bill of lading as printed without a label: a SCAC-like
	// four-letter prefix and at least six digits.
	prefixedRe = regexp.MustCompile(`\b([A-Z]{4}\d{6,16})\b`)
)

// FindReferences returns the references of text, each list sorted and
// without repeats.
func FindReferences(text string) References {
	var r References
	boxes := map[string]bool{}
	for _, m := range containerRe.FindAllStringSubmatch(text, -1) {
		n := numbers.NormalizeContainer(m[1] + m[2] + m[3])
		if numbers.ValidContainer(n) {
			boxes[n] = true
		}
	}
	bols := map[string]bool{}
	for _, m := range bolRe.FindAllStringSubmatch(text, -1) {
		// The number ends at the first run of spaces that is followed by
		// something else than digits (a label further on the line).
		v := firstToken(m[1])
		if n := numbers.NormalizeReference(v); numbers.ValidReference(n) && !boxes[n] {
			bols[n] = true
		}
	}
	for _, m := range prefixedRe.FindAllStringSubmatch(text, -1) {
		if n := m[1]; !boxes[n] && !numbers.ContainerShape(n) {
			bols[n] = true
		}
	}
	bookings := map[string]bool{}
	for _, m := range bookingRe.FindAllStringSubmatch(text, -1) {
		if n := numbers.NormalizeReference(m[1]); numbers.ValidReference(n) && !boxes[n] {
			bookings[n] = true
			delete(bols, n)
		}
	}
	r.BillsOfLading, r.Bookings, r.Containers = sorted(bols), sorted(bookings), sorted(boxes)
	return r
}

func firstToken(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
