package db

import (
	"regexp"
	"time"

	"github.com/lib/pq"
)

// PollWrite is what one poll writes: its request's status and next poll,
// and, when the carrier knows the shipment (Shipment set), the shipment's
// milestones, its containers and their events.
type PollWrite struct {
	// AccountID is the request's account, read only by a TrackingTx over
	// several accounts (InTrackingTxs).
	AccountID    string
	RequestID    string
	Status       string
	FailedReason *string
	NextPollAt   *time.Time // nil: never
	Shipment     *PolledShipment
	Containers   []PolledContainer
	Events       []PolledEvent
}

// PollApplied is what ApplyPolls did with one poll.
type PollApplied struct {
	RequestID string `db:"request_id"`
	// Locked: the request's row was found (the caller holds its lock);
	// not: it was deleted, nothing was written.
	Locked  bool `db:"locked"`
	Present bool `db:"present"`
	// PriorStatus is the request's status before the statement wrote it;
	// Staged: it carries initial custom field values.
	PriorStatus string `db:"prior_status"`
	Staged      bool   `db:"staged"`
	// ShipmentID is the poll's shipment, nil when it has none or when its
	// shipment was inserted by another transaction after the statement's
	// snapshot (nothing was written for the poll then: apply it again).
	ShipmentID *string `db:"shipment_id"`
	// Complete: every container of the poll is stored (false: one was
	// inserted by another transaction after the snapshot, and the poll's
	// events of it are not: apply it again).
	Complete bool `db:"complete"`
	// Moved: the shipment's milestones move its port of discharge or ETA,
	// and are not written: the caller writes them by UpdateShipments
	// (shipmentMoved).
	Moved bool `db:"moved"`
	// The stop facts of the shipment after the statement's writes.
	Stopped       bool     `db:"stopped"`
	StoppedReason *string  `db:"stopped_reason"`
	HasContainers bool     `db:"has_containers"`
	AllTerminated bool     `db:"all_terminated"`
	ArrivedAgo    *float64 `db:"arrived_ago"`
}

// Facts is the poll's shipment's stop facts.
func (a PollApplied) Facts() StopFacts {
	s := StopFacts{Stopped: a.Stopped, StoppedReason: a.StoppedReason, HasContainers: a.HasContainers,
		AllTerminated: a.AllTerminated, ArrivedAgo: a.ArrivedAgo}
	if a.ShipmentID != nil {
		s.ShipmentID = *a.ShipmentID
	}
	return s
}

// ApplyPolls writes a batch of polls of the account in ONE statement, by
// request id: for each request (which the caller locked first: Lock; a
// lock taken by this statement, FOR UPDATE in a CTE, left polls waiting
// on Citus) whose status is one of live, it finds or creates its shipment with its
// milestones (the request's shipment, else the account's of that number
// and carrier, else a new one; one per carrier and number is a unique
// index; a known shipment whose port of discharge or ETA moves is left to
// UpdateShipments: PollApplied.Moved), its containers (one per shipment and
// number), their raw and transport events (one per container and carrier
// event id; an estimate the container holds already adds its raw event
// only), its status
// (written only where it differs: a repeated poll logs nothing) and its
// schedule and the shipment's poll times (quiet columns). It returns each
// request's prior status and the stop facts of its shipment after the
// writes, read from what the statement wrote. Polls of one shipment merge
// (the later poll's known values win; the first poll's request gives the
// customer; an event once per container and id). It decides nothing:
// which statuses are live and each poll's status are the caller's.
//
// A poll whose shipment or container another transaction inserted after
// the statement's snapshot met the unique index (the conflicting insert
// waited for that transaction to commit): its request's row is not
// written, or its events of that container are not, and PollApplied says
// so; the same poll applied again (a new statement, a new snapshot) finds
// the winner's rows. Everything the statement writes is idempotent.
func (t *TrackingTx) ApplyPolls(live []string, ps []PollWrite) (map[string]PollApplied, error) {
	out := map[string]PollApplied{}
	if len(ps) == 0 {
		return out, nil
	}
	// The arguments are array literals built here (arrays.go): the same
	// text as lib/pq's arrays, without their per-element work.
	n := len(ps)
	var nc, ne int
	for i := range ps {
		if ps[i].Shipment != nil {
			nc, ne = nc+len(ps[i].Containers), ne+len(ps[i].Events)
		}
	}
	creq := make([]*string, 0, nc)
	boxes := make([]*PolledContainer, 0, nc)
	ereq := make([]*string, 0, ne)
	evs := make([]*PolledEvent, 0, ne)
	for i := range ps {
		p := &ps[i]
		if p.Shipment == nil {
			continue
		}
		for j := range p.Containers {
			creq, boxes = append(creq, &p.RequestID), append(boxes, &p.Containers[j])
		}
		for j := range p.Events {
			ereq, evs = append(ereq, &p.RequestID), append(evs, &p.Events[j])
		}
	}
	shipment := func(i int) *PolledShipment {
		if ps[i].Shipment == nil {
			return &PolledShipment{}
		}
		return ps[i].Shipment
	}
	cs := func(get func(c *PolledContainer) *string) any {
		return textArray(nc, func(i int) *string { return get(boxes[i]) })
	}
	ct := func(get func(c *PolledContainer) *time.Time) any {
		return timeArray(nc, func(i int) *time.Time { return get(boxes[i]) })
	}
	es := func(get func(e *PolledEvent) *string) any {
		return textArray(ne, func(i int) *string { return get(evs[i]) })
	}
	account := t.accountsArg(n, func(i int) string { return ps[i].AccountID })
	args := append([]any{account, stringArray(live), textArray(n, func(i int) *string { return &ps[i].RequestID }),
		textArray(n, func(i int) *string { return &ps[i].Status }),
		textArray(n, func(i int) *string { return ps[i].FailedReason }),
		timeArray(n, func(i int) *time.Time { return ps[i].NextPollAt }),
		textArray(n, func(i int) *string {
			if ps[i].Shipment == nil {
				return nil
			}
			return &ps[i].Shipment.BillOfLadingNumber
		})},
		polledArrays(n, shipment)...)
	args = append(args, textArray(nc, func(i int) *string { return creq[i] }),
		cs(func(c *PolledContainer) *string { return &c.Number }),
		cs(func(c *PolledContainer) *string { return c.EquipmentType }),
		intArray(nc, func(i int) (int64, bool) {
			if l := boxes[i].EquipmentLength; l != nil {
				return int64(*l), true
			}
			return 0, false
		}),
		cs(func(c *PolledContainer) *string { return c.EquipmentHeight }),
		ct(func(c *PolledContainer) *time.Time { return c.PodArrivedAt }),
		ct(func(c *PolledContainer) *time.Time { return c.PodDischargedAt }),
		ct(func(c *PolledContainer) *time.Time { return c.PodFullOutAt }),
		ct(func(c *PolledContainer) *time.Time { return c.EmptyTerminatedAt }),
		ct(func(c *PolledContainer) *time.Time { return c.PodRailLoadedAt }),
		ct(func(c *PolledContainer) *time.Time { return c.PodRailDepartedAt }),
		ct(func(c *PolledContainer) *time.Time { return c.IndEtaAt }),
		ct(func(c *PolledContainer) *time.Time { return c.IndAtaAt }),
		cs(func(c *PolledContainer) *string { return c.CurrentStatus }),
		textArray(ne, func(i int) *string { return ereq[i] }),
		es(func(e *PolledEvent) *string { return &e.ContainerNumber }),
		es(func(e *PolledEvent) *string { return &e.CarrierEventID }),
		es(func(e *PolledEvent) *string { return &e.Event }),
		es(func(e *PolledEvent) *string { return &e.OriginalEvent }),
		boolArray(ne, func(i int) bool { return evs[i].Estimated }),
		timeArray(ne, func(i int) *time.Time { return evs[i].EventAt }),
		es(func(e *PolledEvent) *string { return e.LocationName }), es(func(e *PolledEvent) *string { return e.Locode }),
		es(func(e *PolledEvent) *string { return e.Facility }), es(func(e *PolledEvent) *string { return e.VesselIMO }),
		es(func(e *PolledEvent) *string { return e.VesselName }), es(func(e *PolledEvent) *string { return e.VoyageNumber }),
		intArray(ne, func(i int) (int64, bool) { return int64(evs[i].Position), true }),
		bytesArray(ne, func(i int) []byte { return evs[i].Payload }),
		es(func(e *PolledEvent) *string { return e.TransportEvent }))
	err := selectRows(t.ctx, t.q, func(a *PollApplied) { out[a.RequestID] = *a }, t.sql.apply, t.textArgs(args)...)
	return out, err
}

// lastKnown is the select item col: the last known (non-null) value of
// src.col among a group's rows, by src.ord.
func lastKnown(col, src, ord string) string {
	return `(array_agg(` + src + `.` + col + ` ORDER BY ` + src + `.` + ord + ` DESC) FILTER (WHERE ` + src + `.` + col + ` IS NOT NULL))[1] AS ` + col
}

// shipmentMoved: the poll moves the shipment's port of discharge or ETA,
// which moves its containers in the rollups (00024's shipment_stats_row,
// reading its containers as they are when its trigger runs). Its
// containers' own triggers read the shipment as it is when they run, so
// both are right only when the shipment and its containers are written by
// different statements: ApplyPolls leaves such a shipment's milestones to
// UpdateShipments, after it.
const shipmentMoved = `((s.port_of_discharge_id, s.pod_eta_at) IS DISTINCT FROM (n.pod_id, n.pod_eta_at))`

// applyPollsSQL is ApplyPolls' statement over one account, which every
// row names as $1 (so that Citus routes it to the account's shard);
// applyPollsAccountsSQL is the same statement over several accounts (a
// TrackingTx over InTrackingTxs' accounts, plain PostgreSQL only): $1 is
// then each poll's account, parallel to its request ($3), every row
// carries its poll's account, each lookup joins on it and each insert
// takes it. One template, two renderings (forAccounts).
var applyPollsSQL, applyPollsAccountsSQL = forAccounts(applyPollsTemplate, false), forAccounts(applyPollsTemplate, true)

// accountToken is a reference to the account in a statement's template
// (forAccounts).
var accountToken = regexp.MustCompile(`\{([a-zA-Z]+)(?::([a-z]*)(?:,([a-z]*))?)?\}`)

// forAccounts renders a template's account references: over one account
// ($1, several false) or over several, each row's own (several true).
// The references:
//
//	{acct:x}     x's account: $1, or x.account_id
//	{col:x}      the account as a column carried on: nothing, or "x.account_id, "
//	{same:x,y}   x's and y's accounts are one: nothing, or "x.account_id = y.account_id AND "
//	{keyOf:x}    a key's account part: nothing, or x.account_id as text and a space
//	{accounts}   the polls' accounts first among u's arrays: nothing, or "$1::uuid[], "
//	{requests:r} r is one of the polls' requests (by account and id)
//	{anyOf:x}    an account of x's rows: $1, or any of x.account_id
func forAccounts(tmpl string, several bool) string {
	return accountToken.ReplaceAllStringFunc(tmpl, func(tok string) string {
		m := accountToken.FindStringSubmatch(tok)
		x, y := m[2], m[3]
		of := func(x string) string {
			if x == "" {
				return "account_id"
			}
			return x + ".account_id"
		}
		switch {
		case m[1] == "acct" && several:
			return of(x)
		case m[1] == "anyOf" && several:
			return "ANY(ARRAY(SELECT " + of(x) + " FROM " + x + "))"
		case m[1] == "acct" || m[1] == "anyOf":
			return "$1"
		case m[1] == "requests" && several:
			return "(" + x + ".account_id, " + x + ".id) IN (SELECT u.account_id, u.request_id FROM u)"
		case m[1] == "requests":
			return x + ".account_id = $1 AND " + x + ".id = ANY($3::uuid[])"
		case !several:
			return ""
		case m[1] == "col":
			return of(x) + ", "
		case m[1] == "same":
			return of(x) + " = " + of(y) + " AND "
		case m[1] == "keyOf":
			return of(x) + "::text || ' ' || "
		case m[1] == "accounts":
			return "$1::uuid[], "
		}
		panic("forAccounts: unknown reference " + tok)
	})
}

// applyPollsTemplate is ApplyPolls' statement (applyPollsSQL). Its parts, in order: the polls
// (u), the requests seen and locked, the live ones' shipments claimed (m:
// merged by shipment; n: as written; ins, upd, quiet) and their ids (sid);
// the containers merged by shipment and number (cm), the stored ones read
// (cs) and locked (ck: FOR KEY SHARE, the events' rows have no key to their
// container, migration 00065; cn: those the lock found), updated,
// inserted, and their ids as written (cid); the events (ev) with their raw
// and transport rows; the stop facts; the requests' outcomes; one row per
// poll.
//
// The lock is a CTE of its own reading only containers (ck), their ids
// given by an ARRAY sublink, not a FOR KEY SHARE OF c in the join of
// containers and cw: PostgreSQL adds a whole-row junk column (type record)
// for every other relation of a locking query's join (cw; a semi-join's
// too), and Citus, which plans each CTE of this statement as a step of its
// own, decides the format of a step's intermediate result twice: the reader
// by the step's target list, junk columns included (a record: text), the
// writer by the result's columns (all binary-capable: binary). The join
// read its binary file as text: 'invalid input syntax for type uuid:
// "PGCOPY"' as soon as a poll had a stored container (docs/decisions.md,
// "The event rows' container keys").
var applyPollsTemplate = `
WITH u AS (
    SELECT * FROM unnest({accounts}$3::uuid[], $4::text[], $5::text[], $6::timestamptz[], $7::text[], $8::text[], $9::text[], $10::text[],
        $11::timestamptz[], $12::timestamptz[], $13::timestamptz[], $14::timestamptz[], $15::timestamptz[], $16::timestamptz[],
        $17::text[], $18::text[], $19::text[], $20::text[]) WITH ORDINALITY
        AS u({col:}request_id, status, failed_reason, next_poll_at, number, pol, pod, dest, pol_etd_at, pol_atd_at, pod_eta_at, pod_ata_at,
             dest_eta_at, dest_ata_at, vessel_name, vessel_imo, voyage, pod_facility, ord)),
present AS (SELECT r.id FROM tracking_requests r WHERE {requests:r}),
lk AS (
    SELECT r.id, r.status AS prior_status, r.shipment_id AS prior_shipment, r.initial_custom_fields IS NOT NULL AS staged,
        r.scac, r.ref_numbers, r.tags
    FROM tracking_requests r WHERE {requests:r}),
live AS (
    SELECT u.*, lk.prior_shipment, lk.scac, lk.ref_numbers, lk.tags
    FROM u JOIN lk ON lk.id = u.request_id WHERE lk.prior_status = ANY($2::text[])),
claim AS (
    SELECT l.*, coalesce(c.id, f.id) AS shipment_id, coalesce(c.shipping_line_scac, f.shipping_line_scac) AS ship_scac,
        coalesce(coalesce(c.id, f.id)::text, {keyOf:l}coalesce(l.scac, '') || ' ' || upper(l.number)) AS key
    FROM live l
    LEFT JOIN shipments c ON c.account_id = {acct:l} AND c.id = l.prior_shipment
    LEFT JOIN shipments f ON c.id IS NULL AND f.account_id = {acct:l} AND f.shipping_line_scac = l.scac
        AND upper(f.normalized_number) = upper(l.number)
    WHERE l.number IS NOT NULL),
m AS (
    SELECT key, (array_agg(shipment_id))[1] AS shipment_id, (array_agg(request_id ORDER BY ord))[1] AS first_request,
        (array_agg(request_id ORDER BY request_id))[1] AS creator,
        ` + lastKnown("pol", "claim", "ord") + `, ` + lastKnown("pod", "claim", "ord") + `, ` + lastKnown("dest", "claim", "ord") + `,
        ` + lastKnown("pol_etd_at", "claim", "ord") + `, ` + lastKnown("pol_atd_at", "claim", "ord") + `,
        ` + lastKnown("pod_eta_at", "claim", "ord") + `, ` + lastKnown("pod_ata_at", "claim", "ord") + `,
        ` + lastKnown("dest_eta_at", "claim", "ord") + `, ` + lastKnown("dest_ata_at", "claim", "ord") + `,
        ` + lastKnown("vessel_name", "claim", "ord") + `, ` + lastKnown("vessel_imo", "claim", "ord") + `,
        ` + lastKnown("voyage", "claim", "ord") + `, ` + lastKnown("pod_facility", "claim", "ord") + `
    FROM claim GROUP BY key),
n AS (
    SELECT {col:cr}m.key, m.shipment_id, cr.number, cr.scac, cr.ref_numbers, cr.tags,
` + shipmentFieldsM + `    FROM m JOIN claim cr ON cr.request_id = m.creator
    LEFT JOIN shipments s ON s.account_id = {acct:cr} AND s.id = m.shipment_id
    LEFT JOIN tracking_requests r ON r.account_id = {acct:cr} AND r.id = m.first_request
    LEFT JOIN parties p ON p.account_id = {acct:cr} AND p.id = r.customer_id),
ins AS (
    INSERT INTO shipments AS s (account_id, bill_of_lading_number, normalized_number, ref_numbers, tags, shipping_line_id,
        shipping_line_scac, shipping_line_name, shipping_line_short_name,
        port_of_lading_id, port_of_lading_locode, port_of_lading_name, pol_timezone, port_of_discharge_id,
        port_of_discharge_locode, port_of_discharge_name, pod_timezone, pod_terminal_id, destination_port_id,
        destination_locode, destination_name, destination_timezone, pol_etd_at, pol_atd_at, pod_eta_at,
        pod_original_eta_at, pod_ata_at, destination_eta_at, destination_ata_at, pod_vessel_name,
        pod_vessel_imo, pod_voyage_number, customer_id, customer_name,
        line_tracking_last_attempted_at, line_tracking_last_succeeded_at)
    SELECT {acct:n}::uuid, n.number, upper(n.number), nullif(n.ref_numbers, '{}'), n.tags, sl.id, n.scac,
        coalesce(sl.name, n.scac), coalesce(sl.short_name, n.scac),
        n.pol_id, n.pol_locode, n.pol_name, n.pol_tz, n.pod_id, n.pod_locode, n.pod_name, n.pod_tz, n.pod_terminal_id, n.dest_id,
        n.dest_locode, n.dest_name, n.dest_tz, n.pol_etd_at, n.pol_atd_at, n.pod_eta_at, n.pod_original_eta_at, n.pod_ata_at,
        n.dest_eta_at, n.dest_ata_at, n.vessel_name, n.vessel_imo, n.voyage, n.customer_id, n.customer_name, now(), now()
    FROM n LEFT JOIN shipping_lines sl ON sl.scac = n.scac
    WHERE n.shipment_id IS NULL
    ON CONFLICT (account_id, shipping_line_scac, upper(normalized_number)) DO NOTHING
    RETURNING {col:s}s.id, s.shipping_line_scac, s.normalized_number),
upd AS (
    UPDATE shipments s SET ` + shipmentSet + `,
        line_tracking_last_attempted_at = now(), line_tracking_last_succeeded_at = now()
    FROM n
    WHERE s.account_id = {acct:n} AND s.id = n.shipment_id
      AND ` + shipmentChanged + ` AND NOT ` + shipmentMoved + `),
quiet AS (
    UPDATE shipments s SET line_tracking_last_attempted_at = now(), line_tracking_last_succeeded_at = now()
    FROM n
    WHERE s.account_id = {acct:n} AND s.id = n.shipment_id
      AND NOT (` + shipmentChanged + ` AND NOT ` + shipmentMoved + `)),
moved AS (
    SELECT n.shipment_id FROM n JOIN shipments s ON s.account_id = {acct:n} AND s.id = n.shipment_id
    WHERE ` + shipmentChanged + ` AND ` + shipmentMoved + `),
sid AS (
    SELECT {col:cl}cl.request_id, cl.key, cl.shipment_id AS id, cl.ship_scac AS scac FROM claim cl WHERE cl.shipment_id IS NOT NULL
    UNION ALL
    SELECT {col:cl}cl.request_id, cl.key, ins.id, ins.shipping_line_scac FROM claim cl
    JOIN ins ON cl.shipment_id IS NULL AND {same:ins,cl}ins.shipping_line_scac = cl.scac AND upper(ins.normalized_number) = upper(cl.number)),
ci AS (
    SELECT * FROM unnest($21::uuid[], $22::text[], $23::text[], $24::int[], $25::text[], $26::timestamptz[], $27::timestamptz[],
        $28::timestamptz[], $29::timestamptz[], $30::timestamptz[], $31::timestamptz[], $32::timestamptz[], $33::timestamptz[],
        $34::text[]) WITH ORDINALITY
        AS ci(request_id, number, equipment_type, equipment_length, equipment_height, pod_arrived_at, pod_discharged_at,
              pod_full_out_at, empty_terminated_at, pod_rail_loaded_at, pod_rail_departed_at, ind_eta_at, ind_ata_at,
              current_status, ord)),
cm AS (
    SELECT {col:x}x.shipment_id, x.number, min(x.key) AS key,
        ` + lastKnown("equipment_type", "x", "ord") + `, ` + lastKnown("equipment_length", "x", "ord") + `,
        ` + lastKnown("equipment_height", "x", "ord") + `, ` + lastKnown("pod_arrived_at", "x", "ord") + `,
        ` + lastKnown("pod_discharged_at", "x", "ord") + `, ` + lastKnown("pod_full_out_at", "x", "ord") + `,
        ` + lastKnown("empty_terminated_at", "x", "ord") + `, ` + lastKnown("pod_rail_loaded_at", "x", "ord") + `,
        ` + lastKnown("pod_rail_departed_at", "x", "ord") + `, ` + lastKnown("ind_eta_at", "x", "ord") + `,
        ` + lastKnown("ind_ata_at", "x", "ord") + `, ` + lastKnown("current_status", "x", "ord") + `
    FROM (SELECT ci.*, {col:sid}sid.id AS shipment_id, sid.key FROM ci JOIN sid ON sid.request_id = ci.request_id) x
    GROUP BY {col:x}x.shipment_id, x.number),
cw AS (
    SELECT cm.*, (SELECT t.id FROM terminals t JOIN ports p ON p.id = t.port_id
        WHERE p.code = m.pod AND m.pod_facility IN (t.firms_code, t.smdg_code, t.bic_facility_code) ORDER BY t.id LIMIT 1) AS term_id
    FROM cm JOIN m ON m.key = cm.key),
cs AS (
    SELECT {col:c}c.id, c.shipment_id, c.number, coalesce(w.equipment_type, c.equipment_type) AS equipment_type,
        coalesce(w.equipment_length, c.equipment_length) AS equipment_length,
        coalesce(w.equipment_height, c.equipment_height) AS equipment_height,
        coalesce(w.term_id, c.pod_terminal_id) AS pod_terminal_id,
        coalesce(w.pod_arrived_at, c.pod_arrived_at) AS pod_arrived_at,
        coalesce(w.pod_discharged_at, c.pod_discharged_at) AS pod_discharged_at,
        coalesce(w.pod_full_out_at, c.pod_full_out_at) AS pod_full_out_at,
        coalesce(w.empty_terminated_at, c.empty_terminated_at) AS empty_terminated_at,
        coalesce(w.pod_rail_loaded_at, c.pod_rail_loaded_at) AS pod_rail_loaded_at,
        coalesce(w.pod_rail_departed_at, c.pod_rail_departed_at) AS pod_rail_departed_at,
        coalesce(w.ind_eta_at, c.ind_eta_at) AS ind_eta_at, coalesce(w.ind_ata_at, c.ind_ata_at) AS ind_ata_at,
        coalesce(w.current_status, c.current_status) AS current_status
    FROM containers c JOIN cw w ON c.account_id = {acct:w} AND c.shipment_id = w.shipment_id AND c.number = w.number),
ck AS (
    SELECT c.id FROM containers c WHERE c.account_id = {anyOf:cs} AND c.id = ANY(ARRAY(SELECT cs.id FROM cs)) FOR KEY SHARE),
cn AS (SELECT cs.* FROM cs WHERE cs.id IN (SELECT ck.id FROM ck)),
cupd AS (
    UPDATE containers c SET equipment_type = n.equipment_type, equipment_length = n.equipment_length,
        equipment_height = n.equipment_height, pod_terminal_id = n.pod_terminal_id, pod_arrived_at = n.pod_arrived_at,
        pod_discharged_at = n.pod_discharged_at, pod_full_out_at = n.pod_full_out_at, empty_terminated_at = n.empty_terminated_at,
        pod_rail_loaded_at = n.pod_rail_loaded_at, pod_rail_departed_at = n.pod_rail_departed_at, ind_eta_at = n.ind_eta_at,
        ind_ata_at = n.ind_ata_at, current_status = n.current_status, updated_at = now()
    FROM cn n
    WHERE c.account_id = {acct:n} AND c.id = n.id
      AND (c.equipment_type, c.equipment_length, c.equipment_height, c.pod_terminal_id, c.pod_arrived_at, c.pod_discharged_at,
           c.pod_full_out_at, c.empty_terminated_at, c.pod_rail_loaded_at, c.pod_rail_departed_at, c.ind_eta_at, c.ind_ata_at,
           c.current_status)
      IS DISTINCT FROM
          (n.equipment_type, n.equipment_length, n.equipment_height, n.pod_terminal_id, n.pod_arrived_at, n.pod_discharged_at,
           n.pod_full_out_at, n.empty_terminated_at, n.pod_rail_loaded_at, n.pod_rail_departed_at, n.ind_eta_at, n.ind_ata_at,
           n.current_status)),
cins AS (
    INSERT INTO containers (account_id, shipment_id, number, equipment_type, equipment_length, equipment_height, pod_terminal_id,
        pod_arrived_at, pod_discharged_at, pod_full_out_at, empty_terminated_at, pod_rail_loaded_at, pod_rail_departed_at,
        ind_eta_at, ind_ata_at, current_status)
    SELECT {acct:w}, w.shipment_id, w.number, w.equipment_type, w.equipment_length, w.equipment_height, w.term_id, w.pod_arrived_at,
        w.pod_discharged_at, w.pod_full_out_at, w.empty_terminated_at, w.pod_rail_loaded_at, w.pod_rail_departed_at,
        w.ind_eta_at, w.ind_ata_at, coalesce(w.current_status, 'new')
    FROM cw w
    WHERE NOT EXISTS (SELECT 1 FROM cn WHERE cn.shipment_id = w.shipment_id AND cn.number = w.number)
    ON CONFLICT (account_id, shipment_id, number) DO NOTHING
    RETURNING id, shipment_id, number, empty_terminated_at),
cid AS (
    SELECT id, shipment_id, number, empty_terminated_at FROM cn
    UNION ALL SELECT id, shipment_id, number, empty_terminated_at FROM cins),
ev AS MATERIALIZED (
    SELECT DISTINCT ON (sid.id, e.number, e.carrier_event_id) {col:sid}sid.id AS shipment_id, sid.scac, e.*
    FROM unnest($35::uuid[], $36::text[], $37::text[], $38::text[], $39::text[], $40::bool[], $41::timestamptz[], $42::text[],
        $43::text[], $44::text[], $45::text[], $46::text[], $47::text[], $48::int[], $49::jsonb[], $50::text[]) WITH ORDINALITY
        AS e(request_id, number, carrier_event_id, event, original_event, estimated, event_at, location_name, locode, facility,
             vessel_imo, vessel_name, voyage, position, payload, transport_event, ord)
    JOIN sid ON sid.request_id = e.request_id
    ORDER BY sid.id, e.number, e.carrier_event_id, e.ord),
place AS (
    SELECT k.locode, k.facility, p.id AS port_id, p.time_zone,
        (SELECT t.id FROM terminals t
            WHERE t.port_id = p.id AND k.facility IN (t.firms_code, t.smdg_code, t.bic_facility_code) ORDER BY t.id LIMIT 1) AS terminal_id
    FROM (SELECT DISTINCT locode, facility FROM ev WHERE locode IS NOT NULL) k JOIN ports p ON p.code = k.locode),
vessel AS (SELECT v.imo, v.id FROM vessels v WHERE v.imo IN (SELECT DISTINCT vessel_imo FROM ev)),
input AS (
    SELECT e.*, c.id AS container_id, gen_random_uuid() AS raw_id,
        pl.port_id, pl.time_zone AS timezone, v.id AS vessel_id, pl.terminal_id,
        EXISTS (SELECT 1 FROM raw_events x WHERE x.account_id = {acct:e} AND x.container_id = c.id
            AND x.scac = e.scac AND x.carrier_event_id = e.carrier_event_id) AS stored,
        (e.estimated AND EXISTS (SELECT 1 FROM transport_events t
            WHERE t.account_id = {acct:e} AND t.container_id = c.id AND t.event = e.transport_event
              AND t.event_at IS NOT DISTINCT FROM e.event_at AND t.location_locode IS NOT DISTINCT FROM e.locode)) AS held
    FROM ev e
    JOIN cid c ON c.shipment_id = e.shipment_id AND c.number = e.number
    LEFT JOIN place pl ON pl.locode = e.locode AND pl.facility IS NOT DISTINCT FROM e.facility
    LEFT JOIN vessel v ON v.imo = e.vessel_imo),
raw AS (
    INSERT INTO raw_events (account_id, id, container_id, shipment_id, scac, carrier_event_id, event, original_event, estimated,
        event_at, timezone, location_name, location_locode, port_id, vessel_id, vessel_name, vessel_imo, voyage_number,
        position, payload)
    SELECT {acct:i}, i.raw_id, i.container_id, i.shipment_id, i.scac, i.carrier_event_id, i.event, i.original_event, i.estimated, i.event_at,
        i.timezone, i.location_name, i.locode, i.port_id, i.vessel_id, i.vessel_name, i.vessel_imo, i.voyage, i.position, i.payload
    FROM input i WHERE NOT i.stored
    ON CONFLICT (account_id, container_id, scac, carrier_event_id) DO NOTHING),
te AS (
    INSERT INTO transport_events (account_id, container_id, shipment_id, raw_event_id, scac, carrier_event_id, event,
        event_at, timezone, location_locode, port_id, terminal_id, vessel_id, voyage_number)
    SELECT {acct:i}, i.container_id, i.shipment_id, i.raw_id, i.scac, i.carrier_event_id, i.transport_event, i.event_at,
        i.timezone, i.locode, i.port_id, i.terminal_id, i.vessel_id, i.voyage
    FROM input i
    WHERE NOT i.stored AND i.transport_event IS NOT NULL AND NOT i.held
    ON CONFLICT (account_id, container_id, scac, carrier_event_id) DO NOTHING),
facts AS (
    SELECT x.id, s.line_tracking_stopped_at IS NOT NULL AS stopped, s.line_tracking_stopped_reason AS stopped_reason,
        EXISTS (SELECT 1 FROM containers c WHERE c.account_id = {acct:x} AND c.shipment_id = x.id)
            OR EXISTS (SELECT 1 FROM cid WHERE cid.shipment_id = x.id) AS has_containers,
        NOT EXISTS (SELECT 1 FROM containers c WHERE c.account_id = {acct:x} AND c.shipment_id = x.id AND c.empty_terminated_at IS NULL
                AND c.id NOT IN (SELECT cid.id FROM cid))
            AND NOT EXISTS (SELECT 1 FROM cid WHERE cid.shipment_id = x.id AND cid.empty_terminated_at IS NULL) AS all_terminated,
        extract(epoch FROM now() - n.pod_ata_at)::float8 AS arrived_ago
    FROM (SELECT DISTINCT {col:}id, key FROM sid) x JOIN n ON n.key = x.key
    LEFT JOIN shipments s ON s.account_id = {acct:x} AND s.id = x.id),
ro AS (
    SELECT {col:l}l.request_id, l.status, l.failed_reason, l.next_poll_at, sid.id AS shipment_id
    FROM live l LEFT JOIN sid ON sid.request_id = l.request_id
    WHERE l.number IS NULL OR sid.id IS NOT NULL),
rupd AS (
    UPDATE tracking_requests r SET status = ro.status, failed_reason = ro.failed_reason,
        shipment_id = coalesce(ro.shipment_id, r.shipment_id), is_retrying = false, retry_count = 0, updated_at = now(),
        last_polled_at = now(), next_poll_at = ro.next_poll_at
    FROM ro WHERE r.account_id = {acct:ro} AND r.id = ro.request_id
      AND (r.status, r.failed_reason, r.shipment_id, r.is_retrying, r.retry_count)
          IS DISTINCT FROM (ro.status, ro.failed_reason, coalesce(ro.shipment_id, r.shipment_id), false, 0)),
rquiet AS (
    UPDATE tracking_requests r SET last_polled_at = now(), next_poll_at = ro.next_poll_at
    FROM ro WHERE r.account_id = {acct:ro} AND r.id = ro.request_id
      AND (r.status, r.failed_reason, r.shipment_id, r.is_retrying, r.retry_count)
          IS NOT DISTINCT FROM (ro.status, ro.failed_reason, coalesce(ro.shipment_id, r.shipment_id), false, 0))
SELECT u.request_id, lk.id IS NOT NULL AS locked, pr.id IS NOT NULL AS present, coalesce(lk.prior_status, '') AS prior_status,
    coalesce(lk.staged, false) AS staged, sid.id AS shipment_id,
    EXISTS (SELECT 1 FROM moved WHERE moved.shipment_id = sid.id) AS moved,
    NOT EXISTS (SELECT 1 FROM ci WHERE ci.request_id = u.request_id
        AND NOT EXISTS (SELECT 1 FROM cid WHERE cid.shipment_id = sid.id AND cid.number = ci.number)) AS complete,
    coalesce(f.stopped, false) AS stopped, f.stopped_reason, coalesce(f.has_containers, false) AS has_containers,
    coalesce(f.all_terminated, false) AS all_terminated, f.arrived_ago
FROM u
LEFT JOIN lk ON lk.id = u.request_id
LEFT JOIN present pr ON pr.id = u.request_id
LEFT JOIN sid ON sid.request_id = u.request_id
LEFT JOIN facts f ON f.id = sid.id`

// StopRequests stops the tracking of requests whose shipment was stopped
// before (a shipment stopped now stops its live requests by its trigger,
// migration 00014): those whose status is one of live become
// tracking_stopped and are no longer scheduled.
func (t *TrackingTx) StopRequests(live []string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := t.q.ExecContext(t.ctx, `
UPDATE tracking_requests SET status = 'tracking_stopped', failed_reason = NULL, is_retrying = false, retry_count = 0,
    next_poll_at = NULL, updated_at = now()
WHERE account_id = $1 AND id = ANY($2::uuid[]) AND status = ANY($3::text[])`, t.account, pq.StringArray(ids), pq.StringArray(live))
	return err
}
