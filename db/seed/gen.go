package seed

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/lib/pq"
)

// The shipment generator. Everything is drawn from one seeded stream in a
// fixed order, so a seed always yields the same rows whatever the chunk
// size; only what later rows need (the previous shipment of each account,
// for documents that cover two) is carried from one shipment to the next.

const seedDay = 24 * time.Hour

// seedStatus describes a container status: which moves it occurs on and how
// long after the vessel's arrival a box is typically in it.
type seedStatus struct {
	name          string
	local, inland bool       // occurs on moves ending at the port / inland by rail
	elapsed       [2]float64 // days since arrival; zero: before arrival
	weight        int        // share among shipments
	localPast     int        // milestones a local move has passed (of seedLocalChain)
	inlandPast    int        // milestones an inland move has passed (of seedInlandChain)
}

// seedStatuses follows the enum order of model.ContainerStatuses, which the
// first shipments run through so that a small seed still shows them all.
var seedStatuses = []seedStatus{
	{"new", true, true, [2]float64{}, 5, 0, 0},
	{"on_ship", true, true, [2]float64{}, 28, 0, 0},
	{"available", true, false, [2]float64{0.5, 8}, 9, 1, 0},
	{"not_available", true, true, [2]float64{0.1, 6}, 6, 1, 1},
	{"grounded", false, true, [2]float64{5, 13}, 3, 0, 5},
	{"on_rail", false, true, [2]float64{2, 9}, 4, 0, 3},
	{"picked_up", true, false, [2]float64{2, 16}, 8, 2, 0},
	{"off_dock", true, false, [2]float64{1, 9}, 3, 1, 0},
	{"delivered", true, true, [2]float64{4, 22}, 10, 2, 6},
	{"dropped", true, true, [2]float64{4, 22}, 4, 2, 6},
	{"loaded", true, true, [2]float64{6, 26}, 3, 2, 6},
	{"empty_returned", true, true, [2]float64{8, 30}, 14, 3, 7},
	{"awaiting_inland_transfer", false, true, [2]float64{0.5, 5}, 3, 0, 1},
}

const (
	stNew = iota
	stOnShip
	stAvailable
	stNotAvailable
	stGrounded
	stOnRail
	stPickedUp
	stOffDock
	stDelivered
	stDropped
	stLoaded
	stEmptyReturned
	stAwaiting
)

// Milestone chains: typical durations (days, min and max) between the milestones
// of a move after the vessel arrives. Local: discharged, full out, empty
// returned. Inland: discharged, loaded on rail, departed, arrived inland,
// unloaded from rail, full out at the ramp, empty returned.
var (
	seedLocalChain  = [][2]float64{{0.1, 1.5}, {1, 6}, {3, 12}}
	seedInlandChain = [][2]float64{{0.1, 1.5}, {1, 4}, {0.1, 1}, {2, 5}, {0.1, 0.8}, {0.5, 4}, {3, 10}}
)

// The first shipments (one per status) stop tracking for each reason whose
// circumstances their status fits.
var seedCoverageStops = map[int]string{
	stNew: "booking_cancelled", stOnShip: "cancelled_by_user", stNotAvailable: "no_updates_at_line",
	stDelivered: "past_full_out_window", stLoaded: "past_arrival_window", stEmptyReturned: "all_containers_terminated",
}

var (
	seedTagWords = []string{"hot", "priority", "customs-review", "hazmat", "fragile", "retail",
		"peak-season", "exam-hold", "drayage-booked", "transload"}
	seedCustomers = []string{"Initech Retail", "Umbrella Home Goods", "Stark Outdoor Supply", "Wayne Apparel",
		"Soylent Foods", "Hooli Devices", "Vandelay Industries", "Wonka Confections", "Cyberdyne Parts",
		"Duff Beverage Co.", "Pied Piper Electronics", "Gringotts Furnishings", "Oceanic Toys", "Tyrell Textiles"}
	seedChassisPools = []string{"DCLZ", "TRAZ", "FLXZ", "MLTZ", "NSPZ"}
	seedHoldKinds    = []struct{ name, hold, pending string }{
		{"customs", "CBP hold: exam ordered", "Awaiting CBP release"},
		{"freight", "Freight charges not paid to the carrier", "Freight release pending"},
		{"USDA", "USDA inspection required", "USDA release pending"},
		{"TMF", "Traffic Mitigation Fee not paid", "Traffic Mitigation Fee due at gate"},
		{"CTF", "Clean Truck Fund fee not paid", "Clean Truck Fund fee due at gate"},
		{"line", "Carrier hold: contact the line", "Carrier release pending"},
	}

	seedCountPick    = newSeedWeighted(35, 25, 15, 12, 8, 5) // containers per shipment, 1..6
	seedEquipPick    = newSeedWeighted(80, 9, 3, 3, 2, 3)    // model.EquipmentTypes order
	seedSourcePick   = newSeedWeighted(35, 25, 30, 10)       // model.DocumentSources order
	seedPriorityPick = newSeedWeighted(2, 6, 3, 1)
)

// seedShip is what the documents of a shipment need to know about it.
type seedShip struct {
	id, bol, voyage        string
	acct                   *seedAccount
	line                   *seedLine
	pol, pod               *seedPort
	vessel                 seedVessel
	created, etd, eta, ata time.Time
	containers             []seedBox
}

type seedBox struct{ id, number string }

// seedChunk holds the rows of one chunk of shipments, per bulk table,
// encoded for COPY.
type seedChunk struct {
	shipments int
	ids       []string // the shipments' ids, for the journeys' choice (journeys.go)
	rows      [seedNumBulk]seedBuf
}

type seedGen struct {
	r          *seedRand
	ref        *seedReference
	accounts   []*seedAccount
	now        time.Time
	n          int // shipments so far
	docs       int // documents so far
	prev       map[*seedAccount]*seedShip
	acctPick   seedWeighted
	linePick   seedWeighted
	podPick    seedWeighted
	polPick    map[string]seedWeighted // by coast
	polByCoast map[string][]*seedPort
	statusPick seedWeighted
	ramps      map[*seedPort][]*seedRailTerminal // inland ramps served from each port's railroads
}

func newSeedGen(r *seedRand, ref *seedReference, accounts []*seedAccount, now time.Time) *seedGen {
	g := &seedGen{r: r, ref: ref, accounts: accounts, now: now, prev: map[*seedAccount]*seedShip{},
		polPick: map[string]seedWeighted{}, polByCoast: map[string][]*seedPort{}}
	// No random draws happen here: drawing in map order would break
	// "same seed, same data".
	var w []int
	for _, a := range accounts {
		w = append(w, a.weight)
	}
	g.acctPick = newSeedWeighted(w...)
	w = nil
	for _, l := range ref.activeLine {
		w = append(w, l.weight)
	}
	g.linePick = newSeedWeighted(w...)
	w = nil
	for _, p := range ref.usPorts {
		w = append(w, p.weight)
	}
	g.podPick = newSeedWeighted(w...)
	for _, p := range ref.polPorts {
		g.polByCoast[p.coast] = append(g.polByCoast[p.coast], p)
	}
	for coast, ports := range g.polByCoast {
		w = nil
		for _, p := range ports {
			w = append(w, p.weight)
		}
		g.polPick[coast] = newSeedWeighted(w...)
	}
	w = nil
	for _, s := range seedStatuses {
		w = append(w, s.weight)
	}
	g.statusPick = newSeedWeighted(w...)
	g.ramps = map[*seedPort][]*seedRailTerminal{}
	for _, p := range ref.usPorts {
		for _, t := range ref.rails {
			if slices.Contains(p.railCarrier, t.carrier) {
				g.ramps[p] = append(g.ramps[p], t)
			}
		}
		if len(g.ramps[p]) == 0 {
			g.ramps[p] = ref.rails
		}
	}
	return g
}

// chunk generates the rows of the next n shipments.
func (g *seedGen) chunk(n int) *seedChunk {
	c := &seedChunk{shipments: n}
	for range n {
		g.shipment(c)
	}
	return c
}

// seedTransitDays is a plausible ocean transit range from an origin region to
// a US coast.
func seedTransitDays(from, to string) (float64, float64) {
	switch {
	case from == "europe" && to == "east":
		return 10, 16
	case from == "europe":
		return 16, 24
	case to == "west":
		return 13, 21
	case to == "gulf":
		return 30, 38
	}
	return 28, 40
}

func (g *seedGen) shipment(c *seedChunk) {
	r, now := g.r, g.now
	i := g.n
	g.n++
	acct := g.accounts[g.acctPick.pick(r)]

	// The first shipments run through every status (and, below, every
	// reason to stop tracking) so that even a tiny data set has them all.
	coverage := i < len(seedStatuses)
	lead := i
	if !coverage {
		lead = g.statusPick.pick(r)
	}
	st := seedStatuses[lead]
	inland := !st.local || (st.inland && r.chance(0.3))
	if coverage && lead == stDelivered {
		inland = false // stops for past_full_out_window: full out at the port
	}

	line := g.ref.activeLine[g.linePick.pick(r)]
	pod := g.ref.usPorts[g.podPick.pick(r)]
	polCoast := "asia"
	if (pod.coast == "east" && r.chance(0.35)) || (pod.coast == "gulf" && r.chance(0.25)) {
		polCoast = "europe"
	}
	pol := g.polByCoast[polCoast][g.polPick[polCoast].pick(r)]
	podTerminal := seedPick(r, pod.terminals)
	tLo, tHi := seedTransitDays(polCoast, pod.coast)
	transit := r.days(tLo, tHi)

	// Timeline: a status before arrival puts the ETA ahead of now, a later
	// one puts the arrival as many days back as boxes usually spend
	// reaching that status.
	var eta, ata time.Time
	var sinceArrival time.Duration
	switch {
	case lead == stNew:
		eta = now.Add(r.days(2, 30))
	case st.elapsed[1] == 0: // on_ship: the vessel has sailed
		eta = now.Add(r.days(0.2, math.Min(30, transit.Hours()/24-2)))
	default:
		sinceArrival = r.days(st.elapsed[0], st.elapsed[1])
		ata = now.Add(-sinceArrival)
		eta = ata.Add(-r.days(-0.3, 0.5))
	}
	arrived := !ata.IsZero()
	etd := eta.Add(-transit)
	if arrived {
		etd = ata.Add(-transit)
	}
	var atd time.Time
	if a := etd.Add(r.days(0, 1.5)); a.Before(now) {
		atd = a
	}
	origEta := eta
	if r.chance(0.5) {
		origEta = eta.Add(-r.days(-2, 6))
	}
	created := etd.Add(-r.days(2, 15))
	if limit := now.Add(-r.days(1.0/24, 2)); created.After(limit) {
		created = limit
	}

	s := &seedShip{id: r.uuid(), acct: acct, line: line, pol: pol, pod: pod, created: created, etd: etd, eta: eta, ata: ata}
	c.ids = append(c.ids, s.id)
	line.bolCount++
	digits := (line.bolCount*line.bolMult + line.bolOffset) % seedPow10(line.bolDigits)
	number := fmt.Sprintf("%0*d", line.bolDigits, digits)
	s.bol = line.bolPrefix + number
	s.vessel = seedPick(r, line.vessels)
	dir := 'E'
	if polCoast == "europe" {
		dir = 'W'
	}
	s.voyage = fmt.Sprintf("%03d%c", 100+r.IntN(900), dir)

	row := make([]any, shNumCols)
	row[shID] = s.id
	row[shAccountID] = acct.id
	row[shBOL] = s.bol
	// The carrier is queried with the number without its SCAC prefix.
	row[shNormalized] = number
	if r.chance(0.4) {
		refs := pq.StringArray{"PO-" + r.digits(7)}
		if r.chance(0.3) {
			refs = append(refs, "SO-"+r.digits(6))
		}
		row[shRefNumbers] = refs
	}
	row[shLineID] = line.id
	row[shLineSCAC] = line.scac
	row[shLineName] = line.name
	row[shLineShort] = line.short
	row[shPOLID], row[shPOLLocode], row[shPOLName], row[shPolTZ] = pol.id, pol.code, pol.name, pol.tz
	row[shPODID], row[shPODLocode], row[shPODName], row[shPodTZ] = pod.id, pod.code, pod.name, pod.tz
	row[shPODTerminalID] = podTerminal.id
	if r.chance(0.85) {
		row[shCustomer] = seedPick(r, seedCustomers)
	}
	row[shVesselName], row[shVesselIMO], row[shVoyage] = s.vessel.name, s.vessel.imo, s.voyage
	row[shPolEtd], row[shPolAtd] = etd, seedTS(atd)
	row[shPodEta], row[shPodOrigEta], row[shPodAta] = eta, origEta, seedTS(ata)

	// Destination: inland moves go to a metro area's rail ramp served by a
	// railroad of the port's coast; local ones end at the port (sometimes
	// at a named terminal), and some lines don't say.
	var rail *seedRailTerminal
	destEta := eta
	if inland {
		rail = seedPick(r, g.ramps[pod])
		metro := rail.metro
		destEta = eta.Add(r.days(5, 9))
		if arrived {
			destEta = ata.Add(r.days(5, 9))
		}
		row[shDestMetroID], row[shDestLocode], row[shDestName], row[shDestTZ] = metro.id, metro.code, metro.name, metro.tz
		row[shDestRailID] = rail.id
		row[shDestEta] = destEta
	} else if r.chance(0.88) {
		row[shDestPortID], row[shDestLocode], row[shDestName], row[shDestTZ] = pod.id, pod.code, pod.name, pod.tz
		if r.chance(0.6) {
			row[shDestTerminalID] = podTerminal.id
		}
		row[shDestEta], row[shDestAta] = eta, seedTS(ata)
	}

	attempted := now.Add(-r.days(10.0/1440, 8.0/24))
	if attempted.Before(created) {
		attempted = created.Add(time.Minute)
	}

	// Containers: all of a coverage shipment share its status; otherwise
	// each box is in the lead status or another one that fits the time
	// since arrival (boxes of one bill are discharged and picked up on
	// different days).
	var candidates []int
	if !coverage {
		d := sinceArrival.Hours() / 24
		for k, cs := range seedStatuses {
			fits := arrived && cs.elapsed[1] > 0 && d >= cs.elapsed[0] && d <= cs.elapsed[1]
			if !arrived && lead == stOnShip {
				fits = k == stNew
			}
			if fits && ((inland && cs.inland) || (!inland && cs.local)) {
				candidates = append(candidates, k)
			}
		}
	}
	nBoxes := seedCountPick.pick(r) + 1
	sum := seedBoxSummary{allEmpty: true, allOut: true}
	reefer := false
	for range nBoxes {
		status := lead
		switchP := 0.35
		if lead == stOnShip {
			switchP = 0.06 // a box the line hasn't reported yet
		}
		if len(candidates) > 0 && r.chance(switchP) {
			status = seedPick(r, candidates)
		}
		box := g.container(c, s, status, inland, rail, podTerminal, destEta, attempted, &sum)
		reefer = reefer || box.reefer
		s.containers = append(s.containers, seedBox{id: box.id, number: box.number})
	}
	if !sum.indAta.IsZero() {
		row[shDestAta] = sum.indAta
	}

	var tags pq.StringArray
	if r.chance(0.75) {
		for range 1 + r.IntN(3) {
			if t := seedPick(r, seedTagWords); !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
	}
	if reefer && r.chance(0.8) {
		tags = append(tags, "reefer")
	}
	if tags == nil {
		tags = pq.StringArray{}
	}
	row[shTags] = tags

	// Stopping: the line stops tracking once every box is back empty, and
	// a few shipments stop for the other reasons.
	reason := ""
	switch {
	case coverage:
		reason = seedCoverageStops[lead]
	case sum.allEmpty && r.chance(0.6):
		reason = "all_containers_terminated"
	case r.chance(0.05):
		options := []string{"no_updates_at_line", "cancelled_by_user"}
		if !arrived {
			options = append(options, "booking_cancelled")
		}
		if arrived && sinceArrival > 10*seedDay {
			options = append(options, "past_arrival_window")
		}
		if arrived && !inland && sum.allOut {
			options = append(options, "past_full_out_window")
		}
		reason = seedPick(r, options)
	}
	if reason != "" {
		var stopped time.Time
		switch reason {
		case "all_containers_terminated":
			stopped = sum.lastEmpty.Add(r.days(0.05, 1))
		case "past_arrival_window":
			stopped = ata.Add(r.days(10, 21))
		case "past_full_out_window":
			stopped = sum.lastOut.Add(r.days(2, 7))
		default:
			stopped = now.Add(-r.days(0.05, 5))
		}
		if stopped.After(now) {
			stopped = now.Add(-time.Minute)
		}
		if stopped.Before(created) {
			stopped = created.Add(time.Hour)
		}
		row[shTrackStoppedAt], row[shTrackStoppedReason] = stopped, reason
		if reason == "cancelled_by_user" || (reason == "booking_cancelled" && r.chance(0.5)) {
			row[shTrackStoppedBy] = acct.users[r.IntN(2)].id // an admin or a member
		}
		attempted = stopped.Add(-r.days(0, 0.1))
		if attempted.Before(created) {
			attempted = created
		}
	}
	succeeded := attempted
	if r.chance(0.1) {
		succeeded = attempted.Add(-r.days(0.05, 3))
		if succeeded.Before(created) {
			succeeded = created
		}
	}
	row[shTrackAttempted], row[shTrackSucceeded] = attempted, succeeded
	row[shCreatedAt], row[shUpdatedAt] = created, succeeded
	c.rows[tShipments].row(row)

	if r.chance(0.8) {
		g.shipmentFields(c, s)
	}
	// About one document per two shipments; a quarter of them also cover
	// the account's previous shipment (a consolidated invoice, say).
	if r.chance(0.5) {
		ships := []*seedShip{s}
		if p := g.prev[acct]; p != nil && r.chance(0.25) {
			ships = append(ships, p)
		}
		g.document(c, ships)
	}
	g.prev[acct] = s
}

// seedBoxSummary collects what the shipment needs to know of its boxes.
type seedBoxSummary struct {
	allEmpty, allOut   bool
	lastEmpty, lastOut time.Time
	indAta             time.Time
}

// shipmentFields sets some of the account's shipment custom fields, with a
// value of the definition's type.
func (g *seedGen) shipmentFields(c *seedChunk, s *seedShip) {
	r := g.r
	use := make([]bool, len(s.acct.shipmentDefs))
	some := false
	for k := range use {
		use[k] = r.chance(0.45)
		some = some || use[k]
	}
	if !some {
		use[0] = true // the customer PO, the field people fill in first
	}
	for k, d := range s.acct.shipmentDefs {
		if !use[k] {
			continue
		}
		var v string
		switch d.dataType {
		case "short_text":
			v = strconv.Quote("PO-" + r.digits(7))
		case "number":
			v = strconv.FormatFloat(math.Round(r.between(1500, 250000)*100)/100, 'f', -1, 64)
		case "date":
			v = strconv.Quote(s.eta.Add(r.days(2, 14)).Format(time.DateOnly))
		case "datetime":
			v = strconv.Quote(s.eta.Add(r.days(2, 14)).Truncate(time.Hour).Format(time.RFC3339))
		case "boolean":
			v = strconv.FormatBool(r.chance(0.08))
		case "enum":
			v = strconv.Quote(d.options[seedPriorityPick.pick(r)].value)
		case "enum_multi":
			var vals []string
			for _, o := range d.options {
				if r.chance(0.3) {
					vals = append(vals, o.value)
				}
			}
			if len(vals) == 0 {
				vals = append(vals, seedPick(r, d.options).value)
			}
			b, _ := json.Marshal(vals)
			v = string(b)
		case "reference":
			v = strconv.Quote(s.acct.users[r.IntN(2)].id)
		}
		at := s.created.Add(r.days(0.01, 2))
		if at.After(g.now) {
			at = g.now
		}
		c.rows[tCustomFields].row([]any{r.uuid(), s.acct.id, d.id, s.id, nil, v, at, at})
	}
}
