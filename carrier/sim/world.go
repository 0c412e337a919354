package sim

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"shipgraph/carrier/numbers"
	"shipgraph/db/seed/seeddata"
)

// DefaultSCACs are the carriers served when Options.SCACs is empty: real
// lines of shipping_lines.csv.
var DefaultSCACs = []string{"MAEU", "MSCU", "CMDU", "HLCU", "ONEY", "EGLV", "COSU", "ZIMU"}

// lineStyle is what the CSV does not say about a line: the ISO 6346 owner
// code of its own boxes (their real BIC prefixes), how its vessels are
// named (the names are made up in the line's pattern; the IMO numbers are
// generated with a valid check digit, not real ships), their flag and the
// length of its booking numbers.
var lineStyle = map[string]struct {
	owner, vessel, flag string
	bookingDigits       int
}{
	"MAEU": {"MSK", "MAERSK %s", "DK", 9},
	"MSCU": {"MSC", "MSC %s", "PA", 9},
	"CMDU": {"CMA", "CMA CGM %s", "FR", 10},
	"HLCU": {"HLX", "%s EXPRESS", "DE", 8},
	"ONEY": {"ONE", "ONE %s", "JP", 10},
	"EGLV": {"EGH", "EVER %s", "TW", 9},
	"COSU": {"CSN", "COSCO %s", "HK", 10},
	"ZIMU": {"ZIM", "ZIM %s", "LR", 9},
	"APLU": {"APL", "APL %s", "SG", 9},
	"OOLU": {"OOL", "OOCL %s", "HK", 10},
	"YMLU": {"YML", "YM %s", "TW", 9},
	"HDMU": {"HDM", "HMM %s", "KR", 9},
}

var vesselWords = []string{
	"AURORA", "HORIZON", "MERIDIAN", "ATLAS", "ORION", "VEGA", "PIONEER", "EMINENCE", "TRIUMPH", "HARMONY",
	"LIBERTY", "SPIRIT", "GLORY", "ZENITH", "COURAGE", "FORTUNE", "SUMMIT", "TRADER", "VOYAGER", "EXPLORER",
}

// port is a place of the simulated routes. Coordinates are approximate
// (the harbour, two decimals) from public gazetteers (UN/LOCODE's own
// coordinates and the ports' published positions), since the reference
// data has none; terminals come from terminals.csv for US ports.
type port struct {
	code, name, country string
	lat, long           string
	region              string // asia, europe, hub-asia, hub-europe, west, east, gulf, inland
	terminals           []terminal
}

type terminal struct{ name, firms string }

var foreignPorts = []port{
	{code: "CNSHA", name: "Shanghai", country: "CN", lat: "31.23", long: "121.49", region: "asia"},
	{code: "CNNGB", name: "Ningbo", country: "CN", lat: "29.87", long: "121.55", region: "asia"},
	{code: "CNYTN", name: "Yantian", country: "CN", lat: "22.57", long: "114.27", region: "asia"},
	{code: "VNSGN", name: "Ho Chi Minh City", country: "VN", lat: "10.77", long: "106.70", region: "asia"},
	{code: "TWKHH", name: "Kaohsiung", country: "TW", lat: "22.61", long: "120.28", region: "asia"},
	{code: "JPTYO", name: "Tokyo", country: "JP", lat: "35.62", long: "139.77", region: "asia"},
	{code: "DEHAM", name: "Hamburg", country: "DE", lat: "53.54", long: "9.97", region: "europe"},
	{code: "NLRTM", name: "Rotterdam", country: "NL", lat: "51.95", long: "4.14", region: "europe"},
	{code: "BEANR", name: "Antwerp", country: "BE", lat: "51.26", long: "4.40", region: "europe"},
	// Transshipment hubs.
	{code: "KRPUS", name: "Busan", country: "KR", lat: "35.10", long: "129.04", region: "hub-asia"},
	{code: "SGSIN", name: "Singapore", country: "SG", lat: "1.26", long: "103.84", region: "hub-asia"},
	{code: "ESALG", name: "Algeciras", country: "ES", lat: "36.13", long: "-5.43", region: "hub-europe"},
}

// usPorts: coordinates and coast of the US ports of terminals.csv the
// routes use (the same approximate positions as the seed's table).
var usPorts = map[string]struct{ lat, long, coast string }{
	"USLAX": {"33.73", "-118.26", "west"}, "USLGB": {"33.75", "-118.21", "west"},
	"USOAK": {"37.80", "-122.31", "west"}, "USSEA": {"47.58", "-122.35", "west"},
	"USTIW": {"47.27", "-122.41", "west"}, "USNYC": {"40.68", "-74.15", "east"},
	"USSAV": {"32.12", "-81.14", "east"}, "USORF": {"36.90", "-76.33", "east"},
	"USBAL": {"39.26", "-76.56", "east"}, "USHOU": {"29.61", "-95.01", "gulf"},
}

// rampPorts are inland rail ramps (city centres' coordinates) a box from a
// west coast port may continue to by rail.
var rampPorts = []port{
	{code: "USCHI", name: "Chicago", country: "US", lat: "41.88", long: "-87.63", region: "inland"},
	{code: "USMEM", name: "Memphis", country: "US", lat: "35.15", long: "-90.05", region: "inland"},
	{code: "USDAL", name: "Dallas", country: "US", lat: "32.78", long: "-96.80", region: "inland"},
	{code: "USMKC", name: "Kansas City", country: "US", lat: "39.10", long: "-94.58", region: "inland"},
}

// isoCodes are common ISO 6346 size-type codes: 20' and 40' dry, 40' high
// cube dry, 40' high cube reefer.
var isoCodes = []string{"22G1", "42G1", "45G1", "45G1", "45R1", "22G1", "45G1"}

// delayReasons are the three-letter delay reason codes (the field holds
// SMDG delay reason codes; these are the simulator's own, in that style)
// and a remark for people that a delayed call's estimates carry.
var delayReasons = []struct{ code, remark string }{
	{"WEA", "Adverse weather"},
	{"PCO", "Port congestion"},
	{"BER", "Berth not available"},
	{"MEC", "Mechanical problem"},
}

type line struct {
	scac, name, bolPrefix string
	owner, flag           string
	bookingDigits         int
	vessels               []vessel
}

type vessel struct{ name, imo, flag, callSign string }

// call is a transport call: a vessel's (or train's) stop at a place.
type call struct {
	id              string
	port            *port
	terminal        terminal
	planned, actual time.Time
}

// leg is one vessel voyage or rail move between two calls.
type leg struct {
	mode           string // VESSEL or RAIL
	vessel         *vessel
	voyage         string
	service        string
	from, to       call
	delay          struct{ code, remark string }
	seqFrom, seqTo int
}

type container struct{ number, iso, seal string }

// shipment is one bill of lading of one carrier with everything that will
// ever happen to it; events says when each becomes published.
type shipment struct {
	line       *line
	bl         string
	booking    string
	manifested bool // at the epoch: tracked with containers; else only the booking is known
	booked     time.Time
	manifest   time.Time // first equipment event: transport events are published from then on
	issued     time.Time // the TRD is issued: from then on the bill of lading is known
	containers []container
	legs       []leg
	events     []*event // sorted by created, then id
}

// world is everything the simulator serves, built once from the seed.
type world struct {
	lines     map[string]*line
	shipments []*shipment
	byBL      map[string]*shipment
	byBooking map[string]*shipment
	byBox     map[string]*shipment
}

func readCSV(b []byte) []map[string]string {
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil || len(rows) == 0 {
		panic("sim: embedded reference data unreadable: " + fmt.Sprint(err)) // embedded at build time
	}
	var out []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			if i < len(r) {
				m[h] = strings.TrimSpace(r[i])
			}
		}
		out = append(out, m)
	}
	return out
}

// destinations reads the US ports of terminals.csv that usPorts places.
func destinations() []port {
	byCode := map[string]*port{}
	var order []string
	for _, t := range readCSV(seeddata.TerminalsCSV) {
		info, ok := usPorts[t["Port Code"]]
		if !ok {
			continue
		}
		p := byCode[t["Port Code"]]
		if p == nil {
			p = &port{code: t["Port Code"], name: t["Port Name"], country: t["Country"], lat: info.lat, long: info.long, region: info.coast}
			byCode[p.code] = p
			order = append(order, p.code)
		}
		p.terminals = append(p.terminals, terminal{name: t["Terminal Name"], firms: t["Firms Code"]})
	}
	sort.Strings(order)
	out := make([]port, 0, len(order))
	for _, c := range order {
		out = append(out, *byCode[c])
	}
	return out
}

// rng returns a generator for one purpose, derived from the seed and the
// names given, so adding a carrier does not change another's shipments.
func rng(seed int64, names ...string) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprint(h, seed)
	for _, n := range names {
		h.Write([]byte{0})
		h.Write([]byte(n))
	}
	s := h.Sum64()
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

var idSpace = uuid.MustParse("6f1c4f3e-8a1d-4b8e-9a57-5c2d7d0e2a11")

// stableID is the UUID of a thing of the world: the same seed and key give
// the same id on every run.
func stableID(seed int64, key string) string {
	return uuid.NewSHA1(idSpace, fmt.Appendf(nil, "%d/%s", seed, key)).String()
}

func newWorld(seed int64, scacs []string, perCarrier int, epoch time.Time) (*world, error) {
	lines := map[string]*line{}
	for _, r := range readCSV(seeddata.ShippingLinesCSV) {
		lines[r["SCAC"]] = &line{scac: r["SCAC"], name: r["Full Name"], bolPrefix: r["BOL Prefix"]}
	}
	w := &world{lines: map[string]*line{}, byBL: map[string]*shipment{}, byBooking: map[string]*shipment{}, byBox: map[string]*shipment{}}
	dest := destinations()
	for _, scac := range scacs {
		l := lines[scac]
		if l == nil {
			return nil, fmt.Errorf("sim: %q is not a SCAC of shipping_lines.csv", scac)
		}
		if l.bolPrefix == "" {
			l.bolPrefix = l.scac
		}
		st, ok := lineStyle[scac]
		if !ok {
			st = lineStyle["MAEU"]
			st.owner, st.vessel = scac[:3], scac+" %s"
		}
		l.owner, l.flag, l.bookingDigits = st.owner, st.flag, st.bookingDigits
		r := rng(seed, scac, "fleet")
		for _, i := range r.Perm(len(vesselWords))[:6] {
			l.vessels = append(l.vessels, vessel{
				name:     fmt.Sprintf(st.vessel, vesselWords[i]),
				imo:      numbers.IMONumber(900000 + r.IntN(100000)),
				flag:     st.flag,
				callSign: fmt.Sprintf("%c%c%c%d", 'A'+r.IntN(26), 'A'+r.IntN(26), 'A'+r.IntN(26), 1+r.IntN(9)),
			})
		}
		w.lines[scac] = l
		r = rng(seed, scac, "shipments")
		for i := 0; i < perCarrier; i++ {
			s := w.newShipment(seed, r, l, i, dest, epoch)
			w.shipments = append(w.shipments, s)
		}
	}
	return w, nil
}

func hours(h int) time.Duration { return time.Duration(h) * time.Hour }

// newShipment draws one shipment: numbers, route, schedule, delays. Every
// fourth one is booked but not manifested at the epoch (its containers
// gate out a few days later).
func (w *world) newShipment(seed int64, r *rand.Rand, l *line, i int, dest []port, epoch time.Time) *shipment {
	s := &shipment{line: l, manifested: i%4 != 3}
	for {
		s.bl = l.bolPrefix + fmt.Sprintf("%09d", r.IntN(1_000_000_000))
		if w.byBL[s.bl] == nil {
			break
		}
	}
	for {
		n := 1 + r.Int64N(9) // no leading zero
		for d := 1; d < l.bookingDigits; d++ {
			n = n*10 + r.Int64N(10)
		}
		s.booking = strconv.FormatInt(n, 10)
		if w.byBooking[s.booking] == nil && w.byBL[s.booking] == nil {
			break
		}
	}
	w.byBL[s.bl], w.byBooking[s.booking] = s, s
	for n := 1 + r.IntN(4); n > 0; n-- {
		for {
			num, _ := numbers.ContainerNumber(l.owner, r.IntN(1_000_000))
			if w.byBox[num] == nil {
				s.containers = append(s.containers, container{number: num, iso: isoCodes[r.IntN(len(isoCodes))], seal: fmt.Sprintf("%s%07d", l.scac[:2], r.IntN(10_000_000))})
				w.byBox[num] = s
				break
			}
		}
	}

	// Route: a destination port, an origin of the right side of the world,
	// sometimes a transshipment hub, sometimes rail inland from the west coast.
	to := dest[r.IntN(len(dest))]
	var origins, hubs []port
	for _, p := range foreignPorts {
		west := to.region == "west"
		switch {
		case west && p.region == "asia", !west && p.region == "europe":
			origins = append(origins, p)
		case west && p.region == "hub-asia", !west && p.region == "hub-europe":
			hubs = append(hubs, p)
		}
	}
	from := origins[r.IntN(len(origins))]
	stops := []port{from}
	transship := r.IntN(3) == 0
	if transship {
		stops = append(stops, hubs[r.IntN(len(hubs))])
	}
	stops = append(stops, to)
	rail := to.region == "west" && r.IntN(3) == 0

	// Schedule: the first planned departure, booking and manifest before it.
	var depart time.Time
	if s.manifested {
		depart = epoch.Add(hours(24*(-40+r.IntN(44)) + r.IntN(24)))
	} else {
		depart = epoch.Add(hours(24*(8+r.IntN(7)) + r.IntN(24)))
	}
	s.manifest = depart.Add(-hours(24 * 6))
	s.booked = s.manifest.Add(-hours(24*(2+r.IntN(4)) + r.IntN(24)))
	if !s.manifested && s.booked.After(epoch) {
		s.booked = epoch.Add(-hours(1 + r.IntN(48)))
	}

	voyage := 100 + r.IntN(800)
	dir := "E"
	service := fmt.Sprintf("TP%d", 1+r.IntN(9))
	if to.region != "west" {
		dir, service = "W", fmt.Sprintf("AE%d", 1+r.IntN(9))
	}
	plannedDep, actualDep := depart, depart.Add(hours(pick(r, 0, 0, 0, 4, 12)))
	seq, first := 1, r.IntN(len(l.vessels))
	for k := 0; k+1 < len(stops); k++ {
		a, b := stops[k], stops[k+1]
		transit := 13 + r.IntN(10)
		if transship && k == 0 {
			transit = 3 + r.IntN(5)
		}
		// A transshipment changes vessel: the next of the fleet.
		v := (first + k) % len(l.vessels)
		lg := leg{mode: "VESSEL", vessel: &l.vessels[v], voyage: fmt.Sprintf("%03d%s", voyage+k, dir), service: service}
		lg.from = call{port: &stops[k], terminal: pickTerminal(r, a)}
		lg.to = call{port: &stops[k+1], terminal: pickTerminal(r, b)}
		lg.from.planned, lg.from.actual = plannedDep, actualDep
		lg.to.planned = plannedDep.Add(hours(24 * transit))
		extra := hours(pick(r, 0, 0, 0, 0, 6, 18, 30, 48, 72, 120))
		lg.to.actual = actualDep.Add(lg.to.planned.Sub(plannedDep)).Add(extra)
		if lg.to.actual.Sub(lg.to.planned) != 0 {
			lg.delay = delayReasons[r.IntN(len(delayReasons))]
		}
		lg.seqFrom, lg.seqTo = seq, seq+1
		seq += 2
		s.legs = append(s.legs, lg)
		// The next leg leaves 2-5 days after the planned arrival, and no
		// sooner than a day after the actual one.
		plannedDep = lg.to.planned.Add(hours(24 * (2 + r.IntN(4))))
		actualDep = plannedDep.Add(hours(pick(r, 0, 0, 6)))
		if min := lg.to.actual.Add(hours(30)); actualDep.Before(min) {
			actualDep = min
		}
	}
	if rail {
		ramp := rampPorts[r.IntN(len(rampPorts))]
		last := s.legs[len(s.legs)-1]
		lg := leg{mode: "RAIL", voyage: fmt.Sprintf("%s%04d", ramp.code[2:], r.IntN(10000))}
		lg.from = call{port: last.to.port, terminal: last.to.terminal}
		lg.to = call{port: &ramp, terminal: terminal{name: ramp.name + " intermodal ramp"}}
		lg.from.planned = last.to.planned.Add(hours(24 * 3))
		lg.from.actual = lg.from.planned.Add(hours(pick(r, 0, 0, 12, 24)))
		if min := last.to.actual.Add(hours(36)); lg.from.actual.Before(min) {
			lg.from.actual = min
		}
		lg.to.planned = lg.from.planned.Add(hours(24 * (3 + r.IntN(3))))
		lg.to.actual = lg.from.actual.Add(lg.to.planned.Sub(lg.from.planned)).Add(hours(pick(r, 0, 0, 8, 20)))
		if lg.to.actual.Sub(lg.to.planned) != 0 {
			lg.delay = struct{ code, remark string }{"RAI", "Rail network congestion"}
		}
		lg.seqFrom, lg.seqTo = seq, seq+1
		s.legs = append(s.legs, lg)
	}
	key := l.scac + "/" + s.bl
	for k := range s.legs {
		s.legs[k].from.id = stableID(seed, fmt.Sprintf("%s/call/%d/from", key, k))
		s.legs[k].to.id = stableID(seed, fmt.Sprintf("%s/call/%d/to", key, k))
	}
	s.events = buildEvents(seed, r, s)
	return s
}

func pick(r *rand.Rand, choices ...int) int { return choices[r.IntN(len(choices))] }

func pickTerminal(r *rand.Rand, p port) terminal {
	if len(p.terminals) == 0 {
		return terminal{}
	}
	return p.terminals[r.IntN(len(p.terminals))]
}
