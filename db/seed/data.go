package seed

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strings"

	"shipgraph/db/seed/seeddata"
)

// Reference data of the demo data set. The terminals and shipping lines are
// real public data (seeddata/*.csv); the foreign ports, metro areas and rail
// terminals are well-known places typed in here, since the CSVs only cover
// US marine terminals and a shipment needs an origin and inland moves.

type seedPort struct {
	id          string
	code        string // UN/LOCODE
	name        string
	city        string
	stateAbbr   string
	country     string
	tz          string
	lat, long   float64
	coast       string // west, east, gulf for US ports; asia or europe abroad
	weight      int    // share of traffic, for picking
	terminals   []*seedTerminal
	railCarrier []string // railroads serving the port (US ports)
}

type seedTerminal struct {
	id, name, nickname, firms, city, state, stateAbbr, country string
	port                                                       *seedPort
}

type seedMetro struct {
	id, code, name, stateAbbr, tz string
	lat, long                     float64
	rail                          []*seedRailTerminal
}

type seedRailTerminal struct {
	id, name, nickname, firms, carrier string
	metro                              *seedMetro
}

type seedLine struct {
	id, scac, name, short, bolPrefix string
	blSupport, bookingSupport        bool
	containerSupport                 bool
	weight                           int    // market share, for picking; 0 = not used for shipments
	owner                            string // ISO 6346 owner code of the line's own boxes
	vessels                          []seedVessel
	bolDigits                        int
	bolMult, bolOffset, bolCount     uint64 // bill-of-lading numbers: a bijection of a counter, so unique per line
}

type seedVessel struct{ name, imo string }

// seedUSStates names the states of the CSV terminals and of the metro areas
// (terminals carry both the state's name and its abbreviation).
var seedUSStates = map[string]string{
	"AL": "Alabama", "CA": "California", "CO": "Colorado", "FL": "Florida", "GA": "Georgia",
	"IL": "Illinois", "LA": "Louisiana", "MA": "Massachusetts", "MD": "Maryland", "MO": "Missouri",
	"NY": "New York", "OH": "Ohio", "PA": "Pennsylvania", "TN": "Tennessee", "TX": "Texas",
	"VA": "Virginia", "WA": "Washington",
}

// seedUSPortInfo adds what the terminals CSV lacks for its ports: approximate
// coordinates, the coast (which decides origins, transit times and
// railroads) and a traffic weight roughly following container volumes.
var seedUSPortInfo = map[string]struct {
	lat, long float64
	coast     string
	weight    int
}{
	"USBAL": {39.26, -76.56, "east", 3}, "USBOS": {42.34, -71.03, "east", 1},
	"USHOU": {29.61, -95.01, "gulf", 7}, "USJAX": {30.40, -81.55, "east", 3},
	"USLGB": {33.75, -118.21, "west", 13}, "USLAX": {33.73, -118.26, "west", 14},
	"USMIA": {25.77, -80.17, "east", 2}, "USMOB": {30.69, -88.04, "gulf", 1},
	"USMSY": {29.93, -90.06, "gulf", 2}, "USNYC": {40.68, -74.15, "east", 12},
	"USOAK": {37.80, -122.31, "west", 5}, "USPHL": {39.90, -75.14, "east", 2},
	"USPEF": {26.09, -80.12, "east", 2}, "USPOT": {27.93, -82.44, "east", 1},
	"USSAV": {32.12, -81.14, "east", 10}, "USSEA": {47.58, -122.35, "west", 4},
	"USTIW": {47.27, -122.41, "west", 4}, "USORF": {36.90, -76.33, "east", 6},
}

// seedForeignPorts are the ports of lading: big export ports with their real
// UN/LOCODEs and IANA zones.
var seedForeignPorts = []seedPort{
	{code: "CNSHA", name: "Shanghai", city: "Shanghai", country: "CN", tz: "Asia/Shanghai", lat: 31.23, long: 121.49, coast: "asia", weight: 12},
	{code: "CNNGB", name: "Ningbo", city: "Ningbo", country: "CN", tz: "Asia/Shanghai", lat: 29.87, long: 121.55, coast: "asia", weight: 9},
	{code: "CNYTN", name: "Yantian", city: "Shenzhen", country: "CN", tz: "Asia/Shanghai", lat: 22.57, long: 114.27, coast: "asia", weight: 9},
	{code: "CNTAO", name: "Qingdao", city: "Qingdao", country: "CN", tz: "Asia/Shanghai", lat: 36.07, long: 120.32, coast: "asia", weight: 5},
	{code: "HKHKG", name: "Hong Kong", city: "Hong Kong", country: "HK", tz: "Asia/Hong_Kong", lat: 22.30, long: 114.17, coast: "asia", weight: 3},
	{code: "KRPUS", name: "Busan", city: "Busan", country: "KR", tz: "Asia/Seoul", lat: 35.10, long: 129.04, coast: "asia", weight: 6},
	{code: "SGSIN", name: "Singapore", city: "Singapore", country: "SG", tz: "Asia/Singapore", lat: 1.26, long: 103.84, coast: "asia", weight: 5},
	{code: "VNSGN", name: "Ho Chi Minh City", city: "Ho Chi Minh City", country: "VN", tz: "Asia/Ho_Chi_Minh", lat: 10.77, long: 106.70, coast: "asia", weight: 5},
	{code: "TWKHH", name: "Kaohsiung", city: "Kaohsiung", country: "TW", tz: "Asia/Taipei", lat: 22.61, long: 120.28, coast: "asia", weight: 3},
	{code: "JPTYO", name: "Tokyo", city: "Tokyo", country: "JP", tz: "Asia/Tokyo", lat: 35.62, long: 139.77, coast: "asia", weight: 2},
	{code: "MYPKG", name: "Port Klang", city: "Port Klang", country: "MY", tz: "Asia/Kuala_Lumpur", lat: 3.00, long: 101.39, coast: "asia", weight: 2},
	{code: "INNSA", name: "Nhava Sheva", city: "Navi Mumbai", country: "IN", tz: "Asia/Kolkata", lat: 18.95, long: 72.95, coast: "asia", weight: 3},
	{code: "DEHAM", name: "Hamburg", city: "Hamburg", country: "DE", tz: "Europe/Berlin", lat: 53.54, long: 9.97, coast: "europe", weight: 4},
	{code: "NLRTM", name: "Rotterdam", city: "Rotterdam", country: "NL", tz: "Europe/Amsterdam", lat: 51.95, long: 4.14, coast: "europe", weight: 5},
	{code: "BEANR", name: "Antwerp", city: "Antwerp", country: "BE", tz: "Europe/Brussels", lat: 51.26, long: 4.40, coast: "europe", weight: 3},
}

// seedRailByCoast: the railroads that take boxes inland from each coast.
var seedRailByCoast = map[string][]string{
	"west": {"BNSF", "UPRR"},
	"east": {"CSXT", "NS"},
	"gulf": {"BNSF", "UPRR", "KCSR"},
}

// seedMetros are inland destinations with their intermodal ramps. The FIRMS
// codes are made up in the H-range, which the marine terminals don't use.
var seedMetros = []struct {
	code, name, state, tz string
	lat, long             float64
	rail                  [][4]string // name, nickname, firms code, railroad
}{
	{"USCHI", "Chicago", "IL", "America/Chicago", 41.88, -87.63, [][4]string{
		{"BNSF Logistics Park Chicago", "LPC", "H571", "BNSF"},
		{"Union Pacific Global IV", "Global IV", "H572", "UPRR"},
		{"CSX Bedford Park", "Bedford Park", "H573", "CSXT"},
		{"Norfolk Southern Landers", "Landers", "H574", "NS"},
	}},
	{"USMEM", "Memphis", "TN", "America/Chicago", 35.15, -90.05, [][4]string{
		{"BNSF Memphis Intermodal Facility", "BNSF Memphis", "H581", "BNSF"},
		{"CSX Memphis Intermodal", "CSX Memphis", "H582", "CSXT"},
		{"Norfolk Southern Rossville", "Rossville", "H583", "NS"},
		{"Union Pacific Marion", "Marion", "H584", "UPRR"},
	}},
	{"USDAL", "Dallas", "TX", "America/Chicago", 32.78, -96.80, [][4]string{
		{"Union Pacific Dallas Intermodal Terminal", "DIT", "H591", "UPRR"},
		{"BNSF Alliance Intermodal", "Alliance", "H592", "BNSF"},
		{"KCS Wylie Intermodal", "Wylie", "H593", "KCSR"},
	}},
	{"USMKC", "Kansas City", "MO", "America/Chicago", 39.10, -94.58, [][4]string{
		{"BNSF Logistics Park Kansas City", "LPKC", "H601", "BNSF"},
		{"KCS International Freight Gateway", "IFG", "H602", "KCSR"},
		{"Union Pacific Kansas City", "UP KC", "H603", "UPRR"},
	}},
	{"USCMH", "Columbus", "OH", "America/New_York", 39.96, -83.00, [][4]string{
		{"Norfolk Southern Rickenbacker", "Rickenbacker", "H611", "NS"},
		{"CSX Columbus Intermodal", "CSX Columbus", "H612", "CSXT"},
	}},
	{"USATL", "Atlanta", "GA", "America/New_York", 33.75, -84.39, [][4]string{
		{"Norfolk Southern Austell", "Austell", "H621", "NS"},
		{"CSX Fairburn Intermodal", "Fairburn", "H622", "CSXT"},
	}},
	{"USDEN", "Denver", "CO", "America/Denver", 39.74, -104.99, [][4]string{
		{"Union Pacific Denver Intermodal", "UP Denver", "H631", "UPRR"},
		{"BNSF Denver Intermodal", "BNSF Denver", "H632", "BNSF"},
	}},
}

// seedLineInfo: market share weights (roughly), the owner code of the line's
// own containers and how its vessels are named. Lines not listed here (or
// without a bill-of-lading prefix) are loaded but get no shipments.
var seedLineInfo = map[string]struct {
	weight        int
	owner, vessel string
}{
	"MSCU": {20, "MSCU", "MSC %s"}, "MAEU": {17, "MAEU", "MAERSK %s"}, "CMDU": {13, "CMAU", "CMA CGM %s"},
	"COSU": {11, "COSU", "COSCO %s"}, "HLCU": {8, "HLCU", "%s EXPRESS"}, "ONEY": {7, "ONEU", "ONE %s"},
	"EGLV": {7, "EGLU", "EVER %s"}, "OOLU": {4, "OOLU", "OOCL %s"}, "HDMU": {3, "HDMU", "HMM %s"},
	"YMLU": {3, "YMLU", "YM %s"}, "APLU": {2, "APLU", "APL %s"}, "SUDU": {2, "SUDU", "CAP %s"},
	"PCIU": {2, "PCIU", "KOTA %s"}, "ANNU": {1, "ANNU", "ANL %s"}, "MATS": {1, "MATU", "MANUKAI %s"},
	"SAFM": {1, "SAFU", "SAFMARINE %s"}, "SEAL": {1, "SEAU", "SEALAND %s"},
}

var seedVesselWords = []string{
	"AURORA", "HORIZON", "TITAN", "ORION", "VEGA", "ATLAS", "NEPTUNE", "POLARIS", "SIRIUS",
	"MERIDIAN", "PACIFIC", "ZEPHYR", "CORAL", "EMERALD", "FALCON", "GENEVA", "HALCYON", "ISTANBUL",
	"JADE", "KESTREL", "LUMEN", "MISTRAL", "NOVA", "OCEANUS", "PEGASUS", "QUASAR", "RAINIER",
	"SOLSTICE", "TRITON", "UNITY", "VALOR", "WAYFARER", "ZENITH", "ALTAIR", "BEACON", "CASSIOPEIA",
}

// seedLeasingOwners are the owner codes of the big container lessors: about
// a third of the boxes on any line are leased.
var seedLeasingOwners = []string{"TGHU", "TCLU", "TEMU", "CAIU", "FCIU", "SEGU", "GESU", "TRHU", "BMOU", "TCNU"}

// seedReference is the whole reference data set, ids included.
type seedReference struct {
	ports      []*seedPort // US ports first (CSV order), then the foreign ones
	usPorts    []*seedPort
	polPorts   []*seedPort
	terminals  []*seedTerminal
	metros     []*seedMetro
	rails      []*seedRailTerminal
	lines      []*seedLine
	activeLine []*seedLine // lines shipments are booked on
}

func seedReadCSV(data []byte) ([]map[string]string, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, err
	}
	var out []map[string]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		m := make(map[string]string, len(header))
		for i, h := range header {
			if i < len(rec) {
				m[h] = strings.TrimSpace(rec[i])
			}
		}
		out = append(out, m)
	}
}

// seedBuildReference parses the CSVs and assigns ids from r, in file order,
// so the same seed always gives the same reference ids.
func seedBuildReference(r *seedRand) (*seedReference, error) {
	ref := &seedReference{}
	terms, err := seedReadCSV(seeddata.TerminalsCSV)
	if err != nil {
		return nil, fmt.Errorf("seed: terminals.csv: %w", err)
	}
	byCode := map[string]*seedPort{}
	for _, t := range terms {
		code := t["Port Code"]
		p := byCode[code]
		if p == nil {
			info, ok := seedUSPortInfo[code]
			if !ok {
				return nil, fmt.Errorf("seed: terminals.csv: no coordinates for port %s", code)
			}
			p = &seedPort{id: r.uuid(), code: code, name: t["Port Name"], city: t["City"], stateAbbr: t["State"],
				country: t["Country"], tz: t["Time Zone"], lat: info.lat, long: info.long, coast: info.coast,
				weight: info.weight, railCarrier: seedRailByCoast[info.coast]}
			byCode[code] = p
			ref.ports = append(ref.ports, p)
			ref.usPorts = append(ref.usPorts, p)
		}
		term := &seedTerminal{id: r.uuid(), name: t["Terminal Name"], nickname: t["Terminal Nickname"],
			firms: t["Firms Code"], city: t["City"], state: seedUSStates[t["State"]], stateAbbr: t["State"],
			country: t["Country"], port: p}
		p.terminals = append(p.terminals, term)
		ref.terminals = append(ref.terminals, term)
	}
	for i := range seedForeignPorts {
		p := seedForeignPorts[i] // a copy: the table stays pristine for the next seed
		p.id = r.uuid()
		ref.ports = append(ref.ports, &p)
		ref.polPorts = append(ref.polPorts, &p)
	}
	for _, m := range seedMetros {
		metro := &seedMetro{id: r.uuid(), code: m.code, name: m.name, stateAbbr: m.state, tz: m.tz, lat: m.lat, long: m.long}
		for _, rt := range m.rail {
			t := &seedRailTerminal{id: r.uuid(), name: rt[0], nickname: rt[1], firms: rt[2], carrier: rt[3], metro: metro}
			metro.rail = append(metro.rail, t)
			ref.rails = append(ref.rails, t)
		}
		ref.metros = append(ref.metros, metro)
	}

	lines, err := seedReadCSV(seeddata.ShippingLinesCSV)
	if err != nil {
		return nil, fmt.Errorf("seed: shipping_lines.csv: %w", err)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		scac := l["SCAC"]
		// The CSV lists Matson twice and CLAM for both Seaboard and
		// Crowley; the SCAC is unique in the table, so the first wins.
		if seen[scac] {
			continue
		}
		seen[scac] = true
		support := l["Support"]
		line := &seedLine{id: r.uuid(), scac: scac, name: l["Full Name"], short: l["Nickname"], bolPrefix: l["BOL Prefix"],
			blSupport: support == "Yes" || support == "Partial", bookingSupport: support == "Yes" || support == "Partial",
			containerSupport: support == "Yes"}
		ref.lines = append(ref.lines, line)
		info, ok := seedLineInfo[scac]
		if !ok || line.bolPrefix == "" || !line.blSupport {
			continue
		}
		line.weight, line.owner = info.weight, info.owner
		line.bolDigits = 10
		if scac == "MAEU" {
			line.bolDigits = 9 // Maersk bills of lading are MAEU + 9 digits
		}
		// Any multiplier ending in 1, 3, 7 or 9 is coprime with 10^n, so
		// counter*mult+offset mod 10^n never repeats and looks random.
		line.bolMult = uint64(r.IntN(400_000_000))*10 + []uint64{1, 3, 7, 9}[r.IntN(4)] + 1_000_000_000
		line.bolOffset = r.Uint64N(seedPow10(line.bolDigits))
		for v := 0; v < 6; v++ {
			word := seedVesselWords[r.IntN(len(seedVesselWords))]
			line.vessels = append(line.vessels, seedVessel{name: fmt.Sprintf(info.vessel, word), imo: seedIMO(r)})
		}
		ref.activeLine = append(ref.activeLine, line)
	}
	return ref, nil
}

func seedPow10(n int) uint64 {
	p := uint64(1)
	for range n {
		p *= 10
	}
	return p
}

// seedIMO returns a 7-digit IMO ship number with a valid check digit: the
// last digit is the sum of the first six weighted 7..2, mod 10. Modern
// container ships are numbered 9xxxxxx.
func seedIMO(r *seedRand) string {
	d := [6]int{9, 1 + r.IntN(9), r.IntN(10), r.IntN(10), r.IntN(10), r.IntN(10)}
	sum := 0
	for i, v := range d {
		sum += v * (7 - i)
	}
	return fmt.Sprintf("%d%d%d%d%d%d%d", d[0], d[1], d[2], d[3], d[4], d[5], sum%10)
}

// seedContainerNumber builds an ISO 6346 number: owner code (3 letters and
// the category U), 6-digit serial, check digit.
func seedContainerNumber(owner string, serial int) string {
	s := fmt.Sprintf("%s%06d", owner, serial)
	return s + string(rune('0'+seedCheckDigit(s)))
}

// seedCheckDigit computes the ISO 6346 check digit of the first ten
// characters: letters count from A=10 upwards skipping multiples of 11
// (so A=10, B=12 … K=21, L=23 …), digits count as themselves; each is
// weighted 2^position, and the sum mod 11 mod 10 is the digit.
func seedCheckDigit(s string) int {
	sum := 0
	for i := 0; i < 10; i++ {
		c := s[i]
		var v int
		if c >= '0' && c <= '9' {
			v = int(c - '0')
		} else {
			v = 10
			for l := byte('A'); l < c; l++ {
				v++
				if v%11 == 0 {
					v++
				}
			}
		}
		sum += v << i
	}
	return sum % 11 % 10
}
