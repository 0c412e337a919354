package seed

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/lib/pq"

	"shipgraph/model"
)

// Documents of the demo data: what a forwarder collects for a bill of
// lading, from every source, with an extraction (representation) each.

// seedDocTypes: weights before and after the vessel's arrival.
var seedDocTypes = []struct {
	typ, label, prefix string
	before, after      int
}{
	{"bill_of_lading", "Bill of Lading", "BL", 40, 20},
	{"commercial_invoice", "Commercial Invoice", "CI", 25, 10},
	{"packing_list", "Packing List", "PL", 20, 10},
	{"certificate_of_origin", "Certificate of Origin", "COO", 5, 0},
	{"arrival_notice", "Arrival Notice", "AN", 10, 30},
	{"delivery_order", "Delivery Order", "DO", 0, 20},
	{"customs_entry", "Customs Entry", "CE", 0, 10},
}

var (
	seedDocBefore, seedDocAfter = func() (seedWeighted, seedWeighted) {
		var b, a []int
		for _, t := range seedDocTypes {
			b, a = append(b, t.before), append(a, t.after)
		}
		return newSeedWeighted(b...), newSeedWeighted(a...)
	}()
	seedSuppliers = []string{"Brightway Electronics", "Oriental Home Furnishing", "Precision Parts Korea",
		"Saigon Garment", "Nordhafen Maschinenbau", "Lotus Ceramics", "Pearl River Toys", "Sunrise Footwear",
		"Taipei Bicycle Works", "Maas Valley Foods"}
	seedClassNotes = []string{"Carrier logo and B/L number found on page 1.",
		"Low confidence: handwritten annotations on page 2.", "Matched by container numbers.",
		"Matched by bill of lading number in the subject line.", "Scanned copy; OCR applied."}
)

const (
	seedXLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
)

// seedSlug turns a name into something usable in an e-mail domain.
func seedSlug(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// document generates one document covering ships (all of one account),
// with its e-mail (for the email source), extractions and links.
func (g *seedGen) document(c *seedChunk, ships []*seedShip) {
	r, now := g.r, g.now
	s, a := ships[0], ships[0].acct
	j := g.docs
	g.docs++

	sources := model.DocumentSources.Values()
	source := sources[j%len(sources)] // the first documents show every source
	if j >= len(sources) {
		source = sources[seedSourcePick.pick(r)]
	}
	arrived := !s.ata.IsZero()
	pick := seedDocBefore
	if arrived {
		pick = seedDocAfter
	}
	dt := seedDocTypes[pick.pick(r)]

	// When the document turns up depends on what it is.
	var at time.Time
	switch dt.typ {
	case "bill_of_lading":
		at = s.etd.Add(r.days(-2, 3))
	case "arrival_notice":
		at = s.eta.Add(-r.days(2, 6))
	case "delivery_order":
		at = s.ata.Add(r.days(0, 2))
	case "customs_entry":
		at = s.eta.Add(-r.days(0, 3))
	default:
		at = s.etd.Add(r.days(-5, 2))
	}
	lo, hi := s.created, now.Add(-time.Minute)
	for _, o := range ships {
		if o.created.After(lo) {
			lo = o.created
		}
	}
	lo = lo.Add(time.Minute)
	if at.Before(lo) {
		at = lo.Add(r.days(0, 0.02))
	}
	if at.After(hi) {
		at = hi
	}

	bols := make([]string, len(ships))
	for k, o := range ships {
		bols[k] = o.bol
	}
	name := dt.label + " " + strings.Join(bols, ", ")
	file := dt.prefix + "_" + s.bol
	ext, ctype := ".pdf", "application/pdf"
	size := math.Exp(r.between(math.Log(40e3), math.Log(2.5e6)))
	switch x := r.Float64(); {
	case source == "split_document":
		first := 1 + r.IntN(6)
		last := first + r.IntN(3)
		name += fmt.Sprintf(" (pages %d-%d)", first, last)
		file += fmt.Sprintf("_p%d-%d", first, last)
		size = float64(last-first+1) * r.between(60e3, 400e3)
	case (dt.typ == "commercial_invoice" || dt.typ == "packing_list") && x < 0.25:
		ext, ctype = ".xlsx", seedXLSX
		size = r.between(12e3, 300e3)
	case x > 0.95:
		ext, ctype = ".png", "image/png"
		size = r.between(80e3, 2e6)
	case x > 0.88:
		ext, ctype = ".jpg", "image/jpeg"
		size = r.between(150e3, 4e6)
	}
	file += ext

	docID := r.uuid()
	var userID, emailID any
	notes := ""
	switch source {
	case "upload":
		userID = a.users[r.IntN(2)].id // viewers can't upload
	case "split_document":
		if r.chance(0.5) {
			userID = a.users[r.IntN(2)].id
		}
		notes = fmt.Sprintf("Split from a %d-page upload.", 6+r.IntN(8))
	case "email":
		var u *seedUser
		emailID, u = g.email(c, ships, dt.label, at)
		if u != nil {
			userID = u.id
		}
	}
	if notes == "" && r.chance(0.2) {
		notes = seedPick(r, seedClassNotes)
	}
	var manual any
	if r.chance(0.04) {
		// a person corrected the classification
		other := seedPick(r, seedDocTypes)
		if other.typ != dt.typ {
			manual = other.typ
			notes = "Reclassified by " + a.users[r.IntN(2)].first + "."
		}
	}

	// Extractions: most documents were read once, some again after a
	// model update; the document points at the newest.
	reps := 1
	if r.chance(0.2) {
		reps = 2
	}
	repAt := at
	var lastRep string
	for v := range reps {
		repAt = repAt.Add(r.days(10.0/86400, 5.0/1440))
		if v > 0 {
			repAt = repAt.Add(r.days(1.0/24, 3))
		}
		if repAt.After(now) {
			repAt = now
		}
		lastRep = r.uuid()
		payload := g.extraction(ships, dt.typ, at)
		c.rows[tReps].row([]any{lastRep, a.id, docID, fmt.Sprintf("1.%d", v), payload, repAt, repAt})
	}

	// A PDF's text names its shipments' numbers and containers, so that
	// relinking finds what the links say (no random draw: the rest of the
	// data stays as it was).
	var status any
	if ctype == "application/pdf" {
		status = "extracted"
		c.rows[tDocTexts].row([]any{a.id, docID, seedDocText(dt.typ, ships), "pdf", repAt})
	}
	c.rows[tDocuments].row([]any{docID, a.id, userID, emailID, lastRep, name, dt.typ, manual,
		seedStr(notes), source, file, ctype, int64(size), at, repAt, status})
	for _, o := range ships {
		c.rows[tDocShipments].row([]any{a.id, docID, o.id})
	}
	// Transport documents name every box; others sometimes a few.
	switch {
	case (dt.typ == "bill_of_lading" || dt.typ == "arrival_notice" || dt.typ == "delivery_order") && r.chance(0.8):
		for _, o := range ships {
			for _, b := range o.containers {
				c.rows[tDocContainers].row([]any{a.id, docID, b.id})
			}
		}
	case r.chance(0.4):
		n := 1 + r.IntN(len(s.containers))
		for _, b := range s.containers[:n] {
			c.rows[tDocContainers].row([]any{a.id, docID, b.id})
		}
	}
}

// email generates the e-mail a document arrived with and returns its id
// and, when a team member forwarded it, that user.
func (g *seedGen) email(c *seedChunk, ships []*seedShip, label string, docAt time.Time) (string, *seedUser) {
	r := g.r
	s, a := ships[0], ships[0].acct
	created := docAt.Add(-r.days(5.0/86400, 60.0/86400))
	sent := created.Add(-r.days(20.0/86400, 4.0/1440))
	subject := label + " - B/L " + s.bol
	var user *seedUser
	from := "documentation@" + seedSlug(s.line.short) + ".example"
	if label == "Commercial Invoice" || label == "Packing List" || label == "Certificate of Origin" {
		from = "exports@" + seedSlug(seedPick(r, seedSuppliers)) + ".example"
	}
	if r.chance(0.3) {
		user = &a.users[r.IntN(2)]
		from, subject = user.email, "FW: "+subject
	}
	body := fmt.Sprintf("Hello,\n\nPlease find attached the %s for B/L %s, %s to %s on %s voyage %s.\n\nKind regards,\n%s",
		strings.ToLower(label), s.bol, s.pol.name, s.pod.name, s.vessel.name, s.voyage, from)
	preview := strings.Join(strings.Fields(body), " ")
	if len(preview) > 120 {
		preview = preview[:120]
	}
	cc := pq.StringArray{}
	if r.chance(0.3) {
		cc = append(cc, "ops@"+a.slug+".example")
	}
	domain := from[strings.IndexByte(from, '@')+1:]
	id := r.uuid()
	c.rows[tEmails].row([]any{id, a.id, g.userID(user), subject, body, preview,
		pq.StringArray{from}, pq.StringArray{"docs@" + a.slug + ".example"}, cc,
		"<" + r.hex(24) + "@" + domain + ">", sent, created, created})
	return id, user
}

func (g *seedGen) userID(u *seedUser) any {
	if u == nil {
		return nil
	}
	return u.id
}

// extraction returns the fields a document reader would pull out of a
// document of this type, as a JSON object.
func (g *seedGen) extraction(ships []*seedShip, typ string, at time.Time) string {
	r := g.r
	s := ships[0]
	var boxes []string
	for _, o := range ships {
		for _, b := range o.containers {
			boxes = append(boxes, b.number)
		}
	}
	p := map[string]any{
		"document_type":         typ,
		"bill_of_lading_number": s.bol,
		"shipping_line_scac":    s.line.scac,
		"confidence":            math.Round(r.between(0.72, 0.99)*100) / 100,
	}
	switch typ {
	case "bill_of_lading":
		p["shipper"] = seedPick(r, seedSuppliers)
		p["consignee"] = s.acct.company
		p["vessel_name"], p["voyage_number"] = s.vessel.name, s.voyage
		p["port_of_loading"], p["port_of_discharge"] = s.pol.code, s.pod.code
		p["container_numbers"] = boxes
	case "arrival_notice":
		p["vessel_name"], p["voyage_number"] = s.vessel.name, s.voyage
		p["port_of_discharge"] = s.pod.code
		p["eta"] = s.eta.Format(time.DateOnly)
		p["freight_charges_usd"] = math.Round(r.between(800, 6500)*100) / 100
		p["container_numbers"] = boxes
	case "commercial_invoice":
		p["invoice_number"] = "INV-" + r.digits(8)
		p["invoice_date"] = at.Format(time.DateOnly)
		p["currency"] = "USD"
		p["total_value"] = math.Round(r.between(5000, 400000)*100) / 100
		p["incoterms"] = seedPick(r, []string{"FOB", "CIF", "EXW", "DDP", "FCA"})
	case "packing_list":
		p["packages"] = 20 + r.IntN(2000)
		p["gross_weight_kg"] = 1000 + r.IntN(26000)
		p["container_numbers"] = boxes
	case "certificate_of_origin":
		p["certificate_number"] = s.pol.country + r.digits(9)
		p["country_of_origin"] = s.pol.country
	case "delivery_order":
		p["release_number"] = r.letters(3) + r.digits(6)
		p["port_of_discharge"] = s.pod.code
		p["container_numbers"] = boxes
	case "customs_entry":
		p["entry_number"] = fmt.Sprintf("%s-%s-%s", r.letters(3), r.digits(7), r.digits(1))
		p["entry_date"] = at.Format(time.DateOnly)
		p["duties_usd"] = math.Round(r.between(150, 40000)*100) / 100
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// seedDocText is the text of a seeded document of type typ covering ships.
func seedDocText(typ string, ships []*seedShip) string {
	refs := DocumentRefs{BillOfLading: ships[0].bol}
	for _, o := range ships {
		for _, b := range o.containers {
			refs.Containers = append(refs.Containers, b.number)
		}
	}
	lines := DocumentLines(typ, refs)
	for _, o := range ships[1:] {
		lines = append(lines, "B/L No: "+o.bol)
	}
	return strings.Join(lines, "\n")
}
