package seed

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/lib/pq"

	"shipgraph/model"
)

// Containers of the demo data: numbers, equipment, and milestones,
// availability, deadlines, holds and fees consistent with their status.

var seedEquipTypes = model.EquipmentTypes.Values() // in seedEquipPick's order

type seedBoxResult struct {
	id, number string
	reefer     bool
}

// container generates one box of s in the given status, with milestones
// consistent with it: nothing at the port while on the ship, a discharge
// once available, a full-out once picked up, and so on.
func (g *seedGen) container(c *seedChunk, s *seedShip, status int, inland bool, rail *seedRailTerminal,
	podTerminal *seedTerminal, destEta, attempted time.Time, sum *seedBoxSummary) seedBoxResult {
	r, now := g.r, g.now
	st := seedStatuses[status]
	row := make([]any, ctNumCols)
	id := r.uuid()
	row[ctID], row[ctAccountID], row[ctShipmentID] = id, s.acct.id, s.id

	// Number: the line's own boxes or a lessor's, unique within the bill.
	var number string
	for number == "" || seedContains(s.containers, number) {
		owner := s.line.owner
		if r.chance(0.3) {
			owner = seedPick(r, seedLeasingOwners)
		}
		number = seedContainerNumber(owner, r.IntN(1_000_000))
	}
	row[ctNumber] = number
	refs := pq.StringArray{}
	if r.chance(0.1) {
		refs = append(refs, "SO-"+r.digits(6))
	}
	row[ctRefNumbers] = refs

	// Equipment: type, then a length and height that exist for it, and a
	// gross weight within what such a box may carry.
	reefer := false
	if status != stNew || r.chance(0.7) {
		typ := seedEquipTypes[seedEquipPick.pick(r)]
		length, height := 40, "standard"
		switch typ {
		case "dry":
			length = []int{20, 40, 40, 40, 40, 45, 20, 10, 20, 40}[r.IntN(10)]
			if length == 45 || (length == 40 && r.chance(0.65)) {
				height = "high_cube"
			}
		case "reefer":
			reefer = true
			if r.chance(0.15) {
				length = 20
			} else if r.chance(0.9) {
				height = "high_cube"
			}
		case "open top", "flat rack":
			if r.chance(0.4) {
				length = 20
			}
		default: // tank, bulk
			length = 20
		}
		row[ctEquipType], row[ctEquipLength], row[ctEquipHeight] = typ, int64(length), height
		if r.chance(0.95) {
			tare, maxGross := 8200.0, 67200.0
			switch length {
			case 10:
				tare, maxGross = 2900, 22400
			case 20:
				tare, maxGross = 4900, 52900
			case 45:
				tare = 10000
			}
			if reefer {
				tare += 1800
			}
			row[ctWeight] = math.Round(tare + r.between(0.15, 0.9)*(maxGross-tare))
		}
	}
	if status != stNew && r.chance(0.92) {
		row[ctSeal] = s.line.scac[:2] + r.digits(7)
	}
	row[ctPODTerminalID], row[ctPodTZ] = podTerminal.id, s.pod.tz
	row[ctShipmentLastRequest] = attempted
	row[ctStatus] = st.name

	// Milestones after arrival: the status says how many have happened;
	// realistic gaps are drawn and squeezed, if need be, into the time
	// since arrival so that none is in the future.
	chain, past := seedLocalChain, st.localPast
	if inland {
		chain, past = seedInlandChain, st.inlandPast
	}
	if status == stNotAvailable && r.chance(0.25) {
		past = 0 // still being discharged
	}
	var m []time.Time
	if !s.ata.IsZero() {
		gaps := make([]time.Duration, past)
		var total time.Duration
		for j := range past {
			gaps[j] = r.days(chain[j][0], chain[j][1])
			total += gaps[j]
		}
		if room := time.Duration(0.95 * float64(now.Sub(s.ata))); total > room {
			for j := range gaps {
				gaps[j] = time.Duration(float64(gaps[j]) * float64(room) / float64(total)).Truncate(time.Second)
			}
		}
		t := s.ata
		for _, gap := range gaps {
			t = t.Add(gap)
			m = append(m, t)
		}
		row[ctPodArrived] = s.ata
	}
	at := func(j int) time.Time {
		if j < len(m) {
			return m[j]
		}
		return time.Time{}
	}
	discharged := at(0)
	row[ctPodDischarged] = seedTS(discharged)
	var fullOut, empty, unloaded, indAta time.Time
	if inland {
		row[ctFinalTZ] = rail.metro.tz
		row[ctRailLoaded], row[ctRailDeparted] = seedTS(at(1)), seedTS(at(2))
		indAta, unloaded = at(3), at(4)
		row[ctIndAta], row[ctIndUnloaded] = seedTS(indAta), seedTS(unloaded)
		fullOut, empty = at(5), at(6)
		row[ctFinalFullOut] = seedTS(fullOut)
		if !empty.IsZero() {
			row[ctEmptyTZ] = rail.metro.tz
		}
		if status == stAwaiting || status == stOnRail || status == stNotAvailable || past > 0 || r.chance(0.5) {
			row[ctPodRailSCAC] = rail.carrier
		}
		if past >= 2 {
			row[ctIndRailSCAC] = rail.carrier
		}
		switch {
		case !indAta.IsZero():
			row[ctIndEta] = indAta.Add(-r.days(-0.5, 1))
		case status == stOnRail:
			eta := at(2).Add(r.days(2, 5))
			if floor := now.Add(r.days(0.3, 3)); eta.Before(floor) {
				eta = floor
			}
			row[ctIndEta] = eta
		case s.ata.IsZero():
			row[ctIndEta] = destEta
		default:
			row[ctIndEta] = now.Add(r.days(3, 8))
		}
		// The shipment reaches its destination with its first box.
		if !indAta.IsZero() && (indAta.Before(sum.indAta) || sum.indAta.IsZero()) {
			sum.indAta = indAta
		}
	} else {
		fullOut, empty = at(1), at(2)
		row[ctPodFullOut] = seedTS(fullOut)
		if !empty.IsZero() {
			row[ctEmptyTZ] = s.pod.tz
		}
		if !fullOut.IsZero() {
			row[ctChassis] = seedPick(r, seedChassisPools) + r.digits(6)
		}
		if !s.ata.IsZero() {
			row[ctPickupFacilityID] = podTerminal.id
			if status == stOffDock && len(s.pod.terminals) > 1 {
				// moved to another facility of the port for pickup
				other := podTerminal
				for other == podTerminal {
					other = seedPick(r, s.pod.terminals)
				}
				row[ctPickupFacilityID] = other.id
			}
		}
	}
	row[ctEmptyTerminated] = seedTS(empty)
	if empty.IsZero() {
		sum.allEmpty = false
	} else if empty.After(sum.lastEmpty) {
		sum.lastEmpty = empty
	}
	if fullOut.IsZero() {
		sum.allOut = false
	} else if fullOut.After(sum.lastOut) {
		sum.lastOut = fullOut
	}

	// Availability, deadlines and what the terminal says.
	known, available := status != stNew, false
	if status == stOnShip {
		known = r.chance(0.4)
	}
	today := now.Truncate(seedDay)
	var lfd time.Time
	switch status {
	case stAvailable, stOffDock:
		available = status == stAvailable || r.chance(0.8)
		lfd = today.Add(time.Duration(r.IntN(6)-1) * seedDay)
		if floor := discharged.Truncate(seedDay).Add(2 * seedDay); lfd.Before(floor) {
			lfd = floor
		}
		if r.chance(0.4) {
			row[ctLfdLine] = lfd.Add(time.Duration(r.IntN(3)) * seedDay)
		}
		if r.chance(0.35) {
			row[ctPickupAppointment] = now.Add(time.Duration(3+r.IntN(70)) * time.Hour)
		}
	case stGrounded:
		available = true
		lfd = today.Add(time.Duration(r.IntN(5)-1) * seedDay)
		if floor := unloaded.Truncate(seedDay).Add(seedDay); lfd.Before(floor) {
			lfd = floor
		}
		row[ctLfdRail], row[ctIndFacilityLfd] = lfd, lfd
		lfd = time.Time{}
	default:
		if !discharged.IsZero() && !inland && r.chance(0.7) {
			lfd = discharged.Truncate(seedDay).Add(4 * seedDay)
		}
		if !unloaded.IsZero() {
			row[ctLfdRail] = unloaded.Truncate(seedDay).Add(3 * seedDay)
		}
		if !fullOut.IsZero() && r.chance(0.3) {
			row[ctPickupAppointment] = fullOut.Add(-r.days(0, 0.12))
		}
	}
	row[ctLfdTerminal] = seedTS(lfd)
	row[ctAvailabilityKnown] = known
	if known {
		row[ctAvailable] = available
		checked := now.Add(-r.days(5.0/1440, 0.5))
		row[ctTerminalChecked], row[ctPodLastRequest] = checked, checked
	}
	atPort := status == stNotAvailable || status == stAvailable || status == stAwaiting || status == stOffDock
	if atPort && !discharged.IsZero() && r.chance(0.7) {
		row[ctLocation] = fmt.Sprintf("%c%02d-%02d-%d", 'A'+r.IntN(8), 1+r.IntN(40), 1+r.IntN(30), 1+r.IntN(5))
	}
	row[ctHolds] = g.holds(status, known)
	row[ctFees] = g.fees(status, lfd)

	created := s.created.Add(time.Duration(r.IntN(120)) * time.Second)
	updated := created
	for _, t := range m {
		if t.After(updated) {
			updated = t
		}
	}
	if known {
		updated = now.Add(-r.days(0, 0.5))
	}
	if updated.Before(created) {
		updated = created
	}
	row[ctCreatedAt], row[ctUpdatedAt] = created, updated
	c.rows[tContainers].row(row)

	if r.chance(0.2) {
		g.containerFields(c, s.acct, id, created)
	}
	return seedBoxResult{id: id, number: number, reefer: reefer}
}

func seedContains(boxes []seedBox, number string) bool {
	for _, b := range boxes {
		if b.number == number {
			return true
		}
	}
	return false
}

// holds returns the terminal's holds as a JSON array: mostly on boxes the
// terminal won't release, sometimes pending ones ahead of arrival.
func (g *seedGen) holds(status int, known bool) string {
	r := g.r
	p, holdStatus := 0.0, "pending"
	switch status {
	case stNotAvailable:
		p, holdStatus = 0.8, "hold"
	case stOnShip:
		if known {
			p = 0.35
		}
	case stAvailable, stOffDock:
		p = 0.3
	case stAwaiting:
		p, holdStatus = 0.4, "hold"
	case stGrounded:
		p = 0.2
	}
	if !r.chance(p) {
		return "[]"
	}
	var holds []model.TerminalHold
	for n := 1 + r.IntN(2); len(holds) < n; {
		kind := seedPick(r, seedHoldKinds)
		dup := false
		for _, h := range holds {
			dup = dup || h.Name == kind.name
		}
		if dup {
			continue
		}
		h := model.TerminalHold{Name: kind.name, Status: model.HoldStatus(holdStatus)}
		if holdStatus == "hold" && r.chance(0.2) {
			h.Status = "pending"
		}
		desc := kind.hold
		if h.Status == "pending" {
			desc = kind.pending
		}
		if r.chance(0.8) {
			h.Description = &desc
		}
		holds = append(holds, h)
	}
	b, _ := json.Marshal(holds)
	return string(b)
}

// fees returns the terminal's fees as a JSON array (USD): demurrage only
// once the last free day has passed, and a total when there are several.
func (g *seedGen) fees(status int, lfd time.Time) string {
	r := g.r
	p := 0.0
	switch status {
	case stNotAvailable, stAvailable:
		p = 0.4
	case stOffDock:
		p = 0.45
	case stAwaiting:
		p = 0.3
	case stGrounded:
		p = 0.35
	case stPickedUp, stDelivered, stDropped:
		p = 0.08
	}
	if !r.chance(p) {
		return "[]"
	}
	var fees []model.TerminalFee
	add := func(t string, lo, hi float64) {
		fees = append(fees, model.TerminalFee{Type: model.FeeType(t), Amount: math.Round(r.between(lo, hi)*100) / 100, CurrencyCode: "USD"})
	}
	if !lfd.IsZero() && lfd.Before(g.now) {
		add("demurrage", 150, 2400)
	}
	if r.chance(0.35) {
		add("exam", 300, 1200)
	}
	if r.chance(0.25) {
		add("extended_dwell_time", 100, 600)
	}
	if len(fees) == 0 || r.chance(0.2) {
		add("other", 25, 200)
	}
	if len(fees) > 1 {
		total := 0.0
		for _, f := range fees {
			total += f.Amount
		}
		fees = append(fees, model.TerminalFee{Type: "total", Amount: math.Round(total*100) / 100, CurrencyCode: "USD"})
	}
	b, _ := json.Marshal(fees)
	return string(b)
}

// containerFields sets the account's container custom fields on a box.
func (g *seedGen) containerFields(c *seedChunk, a *seedAccount, boxID string, created time.Time) {
	r := g.r
	for k, d := range a.containerDefs {
		if k > 0 && !r.chance(0.5) {
			continue
		}
		var v string
		switch d.dataType {
		case "enum":
			v = strconv.Quote(seedPick(r, d.options).value)
		default:
			v = strconv.Quote(fmt.Sprintf("%c%02d-%02d", 'A'+r.IntN(6), 1+r.IntN(30), 1+r.IntN(12)))
		}
		c.rows[tCustomFields].row([]any{r.uuid(), a.id, d.id, nil, boxID, v, created, created})
	}
}
