package docproc

import (
	"regexp"
	"strings"
	"time"
)

// Field is one extracted field of a document schema: its name in the
// payload, what it is (a JSON Schema type: a string, a date, a list of
// strings), its description and the labels it is printed after.
type Field struct {
	Name        string
	Kind        string // "string", "date", "strings"
	Description string
	Labels      []string
}

// The fields, by name; a document type's schema lists a subset
// (schemas.go).
var fields = map[string]Field{
	"bill_of_lading_number": {Name: "bill_of_lading_number", Kind: "string", Description: "The bill of lading number (master or house).",
		Labels: []string{"b/l no", "b/l number", "bill of lading no", "bill of lading number", "waybill no", "mbl", "bol"}},
	"booking_number": {Name: "booking_number", Kind: "string", Description: "The carrier's booking number.",
		Labels: []string{"booking no", "booking number", "booking ref", "booking reference", "booking"}},
	"container_numbers": {Name: "container_numbers", Kind: "strings", Description: "ISO 6346 container numbers (check digit verified)."},
	"shipper":           {Name: "shipper", Kind: "string", Description: "The shipper (party).", Labels: []string{"shipper", "exporter", "seller"}},
	"consignee":         {Name: "consignee", Kind: "string", Description: "The consignee (party).", Labels: []string{"consignee", "buyer", "sold to", "importer of record", "importer"}},
	"notify_party":      {Name: "notify_party", Kind: "string", Description: "The notify party.", Labels: []string{"notify party", "notify"}},
	"carrier":           {Name: "carrier", Kind: "string", Description: "The carrier or shipping line.", Labels: []string{"carrier", "shipping line"}},
	"vessel":            {Name: "vessel", Kind: "string", Description: "The vessel name.", Labels: []string{"vessel", "ocean vessel", "vessel name"}},
	"voyage":            {Name: "voyage", Kind: "string", Description: "The voyage number.", Labels: []string{"voyage", "voyage no", "voy"}},
	"port_of_loading":   {Name: "port_of_loading", Kind: "string", Description: "The port of loading.", Labels: []string{"port of loading", "pol"}},
	"port_of_discharge": {Name: "port_of_discharge", Kind: "string", Description: "The port of discharge.", Labels: []string{"port of discharge", "pod"}},
	"issue_date":        {Name: "issue_date", Kind: "date", Description: "The date of issue.", Labels: []string{"date of issue", "issue date", "issued on", "date"}},
	"invoice_number":    {Name: "invoice_number", Kind: "string", Description: "The invoice number.", Labels: []string{"invoice no", "invoice number", "invoice #"}},
	"invoice_date":      {Name: "invoice_date", Kind: "date", Description: "The invoice date.", Labels: []string{"invoice date", "date"}},
	"total_amount":      {Name: "total_amount", Kind: "string", Description: "The total amount as printed, with its currency.", Labels: []string{"total amount", "total", "amount due"}},
	"gross_weight":      {Name: "gross_weight", Kind: "string", Description: "The total gross weight as printed.", Labels: []string{"total gross weight", "gross weight"}},
	"packages":          {Name: "packages", Kind: "string", Description: "The number of packages as printed.", Labels: []string{"total packages", "packages", "cartons"}},
	"country_of_origin": {Name: "country_of_origin", Kind: "string", Description: "The country of origin.", Labels: []string{"country of origin", "origin"}},
	"eta":               {Name: "eta", Kind: "date", Description: "The estimated arrival date.", Labels: []string{"eta", "estimated arrival", "estimated time of arrival"}},
	"last_free_day":     {Name: "last_free_day", Kind: "date", Description: "The last free day at the terminal.", Labels: []string{"last free day", "lfd"}},
	"release_number":    {Name: "release_number", Kind: "string", Description: "The release (pickup) number.", Labels: []string{"release number", "release no", "pickup number"}},
	"delivery_address":  {Name: "delivery_address", Kind: "string", Description: "Where the cargo is delivered.", Labels: []string{"deliver to", "delivery address"}},
	"entry_number":      {Name: "entry_number", Kind: "string", Description: "The customs entry number.", Labels: []string{"entry no", "entry number"}},
	"entry_date":        {Name: "entry_date", Kind: "date", Description: "The customs entry date.", Labels: []string{"entry date", "date of entry"}},
}

// labelRe matches a label at the start of a line or after two spaces (a
// form's columns), then ':' or '#' or spaces, then the value up to the end
// of the line or the next column.
func labelRe(label string) *regexp.Regexp {
	return regexp.MustCompile(`(?im)(?:^|\s{2,}|\|)\s*` + strings.ReplaceAll(regexp.QuoteMeta(label), `\ `, `\s+`) + `\s*(?:\.|:|#|no\.?)?\s*[:#]?[ \t]*([^\n|]*?)(?:\s{2,}|\||$)`)
}

var labelRes = func() map[string][]*regexp.Regexp {
	out := map[string][]*regexp.Regexp{}
	for name, f := range fields {
		for _, l := range f.Labels {
			out[name] = append(out[name], labelRe(l))
		}
	}
	return out
}()

// ExtractFields returns the payload of a document of type typ: each field
// of its schema found in text (absent when not found), by the schema's
// field names.
func ExtractFields(typ, text string, refs References) map[string]any {
	out := map[string]any{}
	s := SchemaOf(typ)
	for _, name := range s.Fields {
		f := fields[name]
		switch name {
		case "container_numbers":
			if len(refs.Containers) > 0 {
				out[name] = refs.Containers
			}
			continue
		case "bill_of_lading_number":
			if len(refs.BillsOfLading) > 0 {
				out[name] = refs.BillsOfLading[0]
			}
			continue
		case "booking_number":
			if len(refs.Bookings) > 0 {
				out[name] = refs.Bookings[0]
			}
			continue
		}
		v := labelled(name, text)
		if v == "" {
			continue
		}
		if f.Kind == "date" {
			d, ok := parseDate(v)
			if !ok {
				continue
			}
			v = d
		}
		out[name] = v
	}
	return out
}

// labelled is the first value printed after one of the field's labels.
func labelled(name, text string) string {
	for _, re := range labelRes[name] {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			if v := strings.TrimSpace(strings.Trim(m[1], ":#")); v != "" {
				return v
			}
		}
	}
	return ""
}

var dateLayouts = []string{"2006-01-02", "02 Jan 2006", "2 Jan 2006", "Jan 2, 2006", "January 2, 2006", "02-Jan-2006", "2006/01/02", "02.01.2006", "01/02/2006"}

// parseDate reads the first date of s in one of dateLayouts as ISO 8601.
func parseDate(s string) (string, bool) {
	f := strings.Fields(s)
	for n := min(len(f), 3); n >= 1; n-- {
		v := strings.Join(f[:n], " ")
		for _, l := range dateLayouts {
			if t, err := time.Parse(l, v); err == nil {
				return t.Format("2006-01-02"), true
			}
		}
	}
	return "", false
}
