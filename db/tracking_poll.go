package db

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/lib/pq"
)

// The tracking engine's statements (carrier/tracking): what a batch of
// polls of one account writes, in one transaction (TrackingTx), and the
// schedule of the requests. The rules (which request is applied, which
// shipment stops, each request's status) are the use case's. The
// schedule's read of the accounts with due requests is cross-tenant by
// design; every other statement names its account.

// PollTarget is what a poll needs to know about its request.
type PollTarget struct {
	AccountID     string  `db:"account_id"`
	ID            string  `db:"id"`
	RequestType   string  `db:"request_type"`
	RequestNumber string  `db:"request_number"`
	Scac          string  `db:"scac"`
	Status        string  `db:"status"`
	RetryCount    int     `db:"retry_count"`
	ShipmentID    *string `db:"shipment_id"`
}

// TrackingPollTarget reads one request of the account for a poll.
func (db *DB) TrackingPollTarget(ctx context.Context, accountID, id string) (*PollTarget, error) {
	if !validUUID(accountID) || !validUUID(id) {
		return nil, sql.ErrNoRows
	}
	var t PollTarget
	err := db.read(accountID).QueryRowxContext(ctx, `SELECT account_id, id, request_type, request_number, scac, status, retry_count, shipment_id
		FROM tracking_requests WHERE account_id = $1 AND id = $2`, accountID, id).StructScan(&t)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// PolledShipment is what a carrier said about the shipment: nil fields are
// unknown (they leave the stored value alone).
type PolledShipment struct {
	BillOfLadingNumber string
	PolLocode          *string
	PodLocode          *string
	DestinationLocode  *string
	PolEtdAt           *time.Time
	PolAtdAt           *time.Time
	PodEtaAt           *time.Time
	PodAtaAt           *time.Time
	DestinationEtaAt   *time.Time
	DestinationAtaAt   *time.Time
	VesselName         *string
	VesselIMO          *string
	VoyageNumber       *string
	PodFacility        *string // the facility code of the port of discharge's terminal
}

// PolledContainer is what a carrier said about one container.
type PolledContainer struct {
	Number            string
	EquipmentType     *string
	EquipmentLength   *int
	EquipmentHeight   *string
	PodArrivedAt      *time.Time
	PodDischargedAt   *time.Time
	PodFullOutAt      *time.Time
	EmptyTerminatedAt *time.Time
	PodRailLoadedAt   *time.Time
	PodRailDepartedAt *time.Time
	IndEtaAt          *time.Time
	IndAtaAt          *time.Time
	CurrentStatus     *string
}

// PolledEvent is one carrier event of one container: its raw event and,
// when it maps to one, its transport event.
type PolledEvent struct {
	ContainerNumber string
	CarrierEventID  string
	Event           string
	OriginalEvent   string
	Estimated       bool
	EventAt         *time.Time
	LocationName    *string
	Locode          *string
	Facility        *string
	VesselIMO       *string
	VesselName      *string
	VoyageNumber    *string
	Position        int
	Payload         []byte
	TransportEvent  *string // container.transport.…; nil: none
}

// PolledVessel is a vessel met in the events.
type PolledVessel struct {
	IMO      string
	Name     string
	CallSign *string
	Flag     *string
}

// TrackingTx is one transaction of the tracking use case (carrier/tracking)
// over one account: its methods are the statements a batch of polls
// writes, each one statement for every poll of the batch (unnest arrays).
// It decides nothing: which request is applied, which shipment stops and
// why, and each request's status are the caller's.
type TrackingTx struct {
	ctx     context.Context
	q       ext
	account string
}

// InTrackingTx runs fn in one transaction of the account's tracking
// writes: fn's error rolls everything back. Its statements run prepared
// (prepared_tx.go).
func (db *DB) InTrackingTx(ctx context.Context, accountID string, fn func(tx *TrackingTx) error) error {
	return db.inRawTx(ctx, accountID, func(q ext, _ *sql.Tx) error {
		return fn(&TrackingTx{ctx: ctx, q: db.preparedIn(q), account: accountID})
	})
}

// LockedRequest is a request under a poll's lock.
type LockedRequest struct {
	ID           string  `db:"id"`
	Status       string  `db:"status"`
	FailedReason *string `db:"failed_reason"`
	ShipmentID   *string `db:"shipment_id"`
	Retrying     bool    `db:"is_retrying"`
	Retries      int     `db:"retry_count"`
	// Staged: the request carries initial custom field values to write
	// when it first succeeds (ApplyInitialCustomFields).
	Staged bool `db:"staged"`
}

// Lock takes the requests' rows FOR UPDATE SKIP LOCKED: locked are the
// rows taken, busy the ids another transaction holds (another instance
// applying a poll of them); an id in neither was deleted.
func (t *TrackingTx) Lock(ids []string) (locked map[string]LockedRequest, busy []string, err error) {
	locked = map[string]LockedRequest{}
	err = selectRows(t.ctx, t.q, func(r *LockedRequest) { locked[r.ID] = *r },
		`SELECT id, status, failed_reason, shipment_id, is_retrying, retry_count, initial_custom_fields IS NOT NULL AS staged
		FROM tracking_requests
		WHERE account_id = $1 AND id = ANY($2::uuid[]) FOR UPDATE SKIP LOCKED`, t.account, pq.StringArray(ids))
	if err != nil || len(locked) == len(ids) {
		return locked, nil, err
	}
	var missing []string
	for _, id := range ids {
		if _, ok := locked[id]; !ok {
			missing = append(missing, id)
		}
	}
	err = selectRows(t.ctx, t.q, func(r *LockedRequest) { busy = append(busy, r.ID) },
		`SELECT id, '' AS status, NULL AS failed_reason, NULL::uuid AS shipment_id, false AS is_retrying, 0 AS retry_count,
		false AS staged FROM tracking_requests WHERE account_id = $1 AND id = ANY($2::uuid[])`,
		t.account, pq.StringArray(missing))
	return locked, busy, err
}

// ShipmentClaim asks for a request's shipment: the one it has (Current),
// else the account's shipment of Number and the request's carrier, else a
// new one.
type ShipmentClaim struct {
	RequestID string
	Number    string
	Current   *string
}

type requestShipment struct {
	RequestID  string `db:"request_id"`
	ShipmentID string `db:"id"`
}

// Shipments finds or creates the shipments of the claims, by request id.
// One shipment per (account, carrier, number) is a unique index
// (migration 00023): two claims of one number in the batch make one
// shipment; a claim meeting another transaction's insert waits for it,
// does nothing, and the next statement (whose snapshot is newer than the
// other's commit) reads the winner's row.
func (t *TrackingTx) Shipments(cs []ShipmentClaim) (map[string]string, error) {
	out := map[string]string{}
	if len(cs) == 0 {
		return out, nil
	}
	req := make([]string, len(cs))
	num := make([]string, len(cs))
	cur := make([]sql.NullString, len(cs))
	for i, c := range cs {
		req[i], num[i] = c.RequestID, c.Number
		if c.Current != nil {
			cur[i] = sql.NullString{String: *c.Current, Valid: true}
		}
	}
	each := func(r *requestShipment) { out[r.RequestID] = r.ShipmentID }
	err := selectRows(t.ctx, t.q, each, `
WITH input AS (SELECT * FROM unnest($2::uuid[], $3::text[], $4::uuid[]) AS u(request_id, number, current_id)),
req AS (
    SELECT i.request_id, i.number, i.current_id, r.scac, r.ref_numbers, r.tags
    FROM input i JOIN tracking_requests r ON r.account_id = $1 AND r.id = i.request_id),
cur AS (SELECT req.request_id, s.id FROM req JOIN shipments s ON s.account_id = $1 AND s.id = req.current_id),
found AS (
    SELECT req.request_id, s.id FROM req JOIN shipments s ON s.account_id = $1 AND s.shipping_line_scac = req.scac
        AND upper(s.normalized_number) = upper(req.number)
    WHERE NOT EXISTS (SELECT 1 FROM cur WHERE cur.request_id = req.request_id)),
need AS (
    SELECT req.* FROM req
    WHERE NOT EXISTS (SELECT 1 FROM cur WHERE cur.request_id = req.request_id)
      AND NOT EXISTS (SELECT 1 FROM found WHERE found.request_id = req.request_id)),
ins AS (
    INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number, ref_numbers, tags, shipping_line_id,
        shipping_line_scac, shipping_line_name, shipping_line_short_name)
    SELECT DISTINCT ON (n.scac, upper(n.number)) $1::uuid, n.number, upper(n.number), nullif(n.ref_numbers, '{}'), n.tags, sl.id, n.scac,
        coalesce(sl.name, n.scac), coalesce(sl.short_name, n.scac)
    FROM need n LEFT JOIN shipping_lines sl ON sl.scac = n.scac
    ORDER BY n.scac, upper(n.number), n.request_id
    ON CONFLICT (account_id, shipping_line_scac, upper(normalized_number)) DO NOTHING
    RETURNING id, shipping_line_scac, normalized_number)
SELECT request_id, id FROM cur
UNION ALL SELECT request_id, id FROM found
UNION ALL SELECT need.request_id, ins.id FROM need JOIN ins ON ins.shipping_line_scac = need.scac
    AND upper(ins.normalized_number) = upper(need.number)`, t.account, pq.StringArray(req), pq.StringArray(num), pq.Array(cur))
	if err != nil || len(out) == len(cs) {
		return out, err
	}
	// Another transaction created some after this statement's snapshot.
	return out, selectRows(t.ctx, t.q, each, `
SELECT u.request_id, s.id FROM unnest($2::uuid[], $3::text[]) AS u(request_id, number)
JOIN tracking_requests r ON r.account_id = $1 AND r.id = u.request_id
JOIN shipments s ON s.account_id = $1 AND s.shipping_line_scac = r.scac AND upper(s.normalized_number) = upper(u.number)`,
		t.account, pq.StringArray(req), pq.StringArray(num))
}

// ShipmentUpdate is what a poll says about one shipment, with the request
// whose customer the shipment takes when it has none.
type ShipmentUpdate struct {
	ShipmentID, RequestID string
	PolledShipment
}

// shipmentFieldsOf is a polled shipment's fields as written: each polled
// value (columns of src) where the poll has one, the stored one (s)
// otherwise; ports, terminals and the customer looked up. One text for the
// update of known shipments and for the claim that creates them.
func shipmentFieldsOf(src string) string {
	return strings.ReplaceAll(`        coalesce((SELECT p.id FROM ports p WHERE p.code = {src}.pol), s.port_of_lading_id) AS pol_id,
        coalesce({src}.pol, s.port_of_lading_locode) AS pol_locode,
        coalesce((SELECT p.name FROM ports p WHERE p.code = {src}.pol), s.port_of_lading_name) AS pol_name,
        coalesce((SELECT p.time_zone FROM ports p WHERE p.code = {src}.pol), s.pol_timezone) AS pol_tz,
        coalesce((SELECT p.id FROM ports p WHERE p.code = {src}.pod), s.port_of_discharge_id) AS pod_id,
        coalesce({src}.pod, s.port_of_discharge_locode) AS pod_locode,
        coalesce((SELECT p.name FROM ports p WHERE p.code = {src}.pod), s.port_of_discharge_name) AS pod_name,
        coalesce((SELECT p.time_zone FROM ports p WHERE p.code = {src}.pod), s.pod_timezone) AS pod_tz,
        coalesce((SELECT t.id FROM terminals t JOIN ports p ON p.id = t.port_id
            WHERE p.code = {src}.pod AND {src}.pod_facility IN (t.firms_code, t.smdg_code, t.bic_facility_code) ORDER BY t.id LIMIT 1), s.pod_terminal_id) AS pod_terminal_id,
        CASE WHEN {src}.dest IS NULL THEN s.destination_port_id ELSE (SELECT p.id FROM ports p WHERE p.code = {src}.dest) END AS dest_id,
        coalesce({src}.dest, s.destination_locode) AS dest_locode,
        CASE WHEN {src}.dest IS NULL THEN s.destination_name ELSE coalesce((SELECT p.name FROM ports p WHERE p.code = {src}.dest), {src}.dest) END AS dest_name,
        coalesce((SELECT p.time_zone FROM ports p WHERE p.code = {src}.dest), s.destination_timezone) AS dest_tz,
        coalesce({src}.pol_etd_at, s.pol_etd_at) AS pol_etd_at, coalesce({src}.pol_atd_at, s.pol_atd_at) AS pol_atd_at,
        coalesce({src}.pod_eta_at, s.pod_eta_at) AS pod_eta_at, coalesce(s.pod_original_eta_at, {src}.pod_eta_at) AS pod_original_eta_at,
        coalesce({src}.pod_ata_at, s.pod_ata_at) AS pod_ata_at,
        coalesce({src}.dest_eta_at, s.destination_eta_at) AS dest_eta_at, coalesce({src}.dest_ata_at, s.destination_ata_at) AS dest_ata_at,
        coalesce({src}.vessel_name, s.pod_vessel_name) AS vessel_name, coalesce({src}.vessel_imo, s.pod_vessel_imo) AS vessel_imo,
        coalesce({src}.voyage, s.pod_voyage_number) AS voyage,
        coalesce(s.customer_id, r.customer_id) AS customer_id,
        CASE WHEN s.customer_id IS NULL AND p.id IS NOT NULL
             THEN coalesce(nullif(btrim(s.customer_name), ''), p.company_name) ELSE s.customer_name END AS customer_name
`, "{src}.", src+".")
}

// polledArrays is the n polled shipments' fields as statement arguments,
// one array per field, in the order shipmentFieldsOf's source columns
// take them: pol, pod, dest, the six milestones, vessel name and IMO,
// voyage, POD facility.
func polledArrays(n int, at func(i int) *PolledShipment) []any {
	s := func(get func(p *PolledShipment) *string) any {
		return pq.Array(strsOf(n, func(i int) *string { return get(at(i)) }))
	}
	tm := func(get func(p *PolledShipment) *time.Time) any {
		return pqTimes(timesOf(n, func(i int) *time.Time { return get(at(i)) }))
	}
	return []any{
		s(func(p *PolledShipment) *string { return p.PolLocode }), s(func(p *PolledShipment) *string { return p.PodLocode }),
		s(func(p *PolledShipment) *string { return p.DestinationLocode }),
		tm(func(p *PolledShipment) *time.Time { return p.PolEtdAt }), tm(func(p *PolledShipment) *time.Time { return p.PolAtdAt }),
		tm(func(p *PolledShipment) *time.Time { return p.PodEtaAt }), tm(func(p *PolledShipment) *time.Time { return p.PodAtaAt }),
		tm(func(p *PolledShipment) *time.Time { return p.DestinationEtaAt }),
		tm(func(p *PolledShipment) *time.Time { return p.DestinationAtaAt }),
		s(func(p *PolledShipment) *string { return p.VesselName }), s(func(p *PolledShipment) *string { return p.VesselIMO }),
		s(func(p *PolledShipment) *string { return p.VoyageNumber }), s(func(p *PolledShipment) *string { return p.PodFacility }),
	}
}

var shipmentFieldsU, shipmentFieldsM = shipmentFieldsOf("u"), shipmentFieldsOf("m")

// shipmentSet writes the fields of n (shipmentFieldsOf's columns) into s;
// shipmentChanged is true where they differ from what s holds.
const (
	shipmentSet = `port_of_lading_id = n.pol_id, port_of_lading_locode = n.pol_locode, port_of_lading_name = n.pol_name,
    pol_timezone = n.pol_tz, port_of_discharge_id = n.pod_id, port_of_discharge_locode = n.pod_locode,
    port_of_discharge_name = n.pod_name, pod_timezone = n.pod_tz, pod_terminal_id = n.pod_terminal_id,
    destination_port_id = n.dest_id, destination_metro_area_id = CASE WHEN n.dest_id IS NULL THEN s.destination_metro_area_id END,
    destination_locode = n.dest_locode, destination_name = n.dest_name, destination_timezone = n.dest_tz,
    pol_etd_at = n.pol_etd_at, pol_atd_at = n.pol_atd_at, pod_eta_at = n.pod_eta_at, pod_original_eta_at = n.pod_original_eta_at,
    pod_ata_at = n.pod_ata_at, destination_eta_at = n.dest_eta_at, destination_ata_at = n.dest_ata_at,
    pod_vessel_name = n.vessel_name, pod_vessel_imo = n.vessel_imo, pod_voyage_number = n.voyage,
    customer_id = n.customer_id, customer_name = n.customer_name, updated_at = now()`
	shipmentChanged = `(s.port_of_lading_id, s.port_of_lading_locode, s.port_of_lading_name, s.pol_timezone, s.port_of_discharge_id,
       s.port_of_discharge_locode, s.port_of_discharge_name, s.pod_timezone, s.pod_terminal_id, s.destination_port_id,
       s.destination_locode, s.destination_name, s.destination_timezone, s.pol_etd_at, s.pol_atd_at, s.pod_eta_at,
       s.pod_original_eta_at, s.pod_ata_at, s.destination_eta_at, s.destination_ata_at, s.pod_vessel_name,
       s.pod_vessel_imo, s.pod_voyage_number, s.customer_id, s.customer_name)
  IS DISTINCT FROM
      (n.pol_id, n.pol_locode, n.pol_name, n.pol_tz, n.pod_id, n.pod_locode, n.pod_name, n.pod_tz, n.pod_terminal_id, n.dest_id,
       n.dest_locode, n.dest_name, n.dest_tz, n.pol_etd_at, n.pol_atd_at, n.pod_eta_at, n.pod_original_eta_at, n.pod_ata_at,
       n.dest_eta_at, n.dest_ata_at, n.vessel_name, n.vessel_imo, n.voyage, n.customer_id, n.customer_name)`
)

// UpdateShipments writes the carrier's milestones of each shipment where
// they differ from what is stored (known values replace, unknown ones
// keep; the first ETA ever seen stays pod_original_eta_at): port of
// lading/discharge by UN/LOCODE against ports, the POD terminal by its
// facility code, destination, times, the vessel at the port of discharge.
// A shipment without a customer takes its request's (a party), and
// customer_name, when empty, the party's company name; one that has one
// keeps it. One row per shipment.
func (t *TrackingTx) UpdateShipments(us []ShipmentUpdate) error {
	if len(us) == 0 {
		return nil
	}
	n := len(us)
	id := make([]string, n)
	req := make([]string, n)
	for i, u := range us {
		id[i], req[i] = u.ShipmentID, u.RequestID
	}
	_, err := t.q.ExecContext(t.ctx, `
WITH u AS (
    SELECT * FROM unnest($2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[],
        $9::timestamptz[], $10::timestamptz[], $11::timestamptz[], $12::timestamptz[], $13::text[], $14::text[], $15::text[], $16::text[])
        AS u(id, request_id, pol, pod, dest, pol_etd_at, pol_atd_at, pod_eta_at, pod_ata_at, dest_eta_at, dest_ata_at,
             vessel_name, vessel_imo, voyage, pod_facility)),
n AS (
    SELECT s.id,
`+shipmentFieldsU+`    FROM u JOIN shipments s ON s.account_id = $1 AND s.id = u.id
    LEFT JOIN tracking_requests r ON r.account_id = $1 AND r.id = u.request_id
    LEFT JOIN parties p ON p.account_id = $1 AND p.id = r.customer_id)
UPDATE shipments s SET `+shipmentSet+`
FROM n
WHERE s.account_id = $1 AND s.id = n.id
  AND `+shipmentChanged,
		append([]any{t.account, pq.StringArray(id), pq.StringArray(req)},
			polledArrays(n, func(i int) *PolledShipment { return &us[i].PolledShipment })...)...)
	return err
}

// ShipmentPoll is one poll's claim of its shipment with what the carrier
// said about it.
type ShipmentPoll struct {
	ShipmentClaim
	PolledShipment
}

// ClaimShipments finds or creates the shipments of the polls and writes
// their milestones in one statement, by request id: Shipments and
// UpdateShipments together, so a new shipment is inserted with its
// milestones (its row triggers run once, on the insert) and an existing one
// updated where it differs. Polls of one shipment merge as UpdateShipments'
// callers merge them: the later poll's known values replace the earlier
// one's, and the shipment takes the customer of its first poll's request.
// A poll whose shipment another transaction inserted after this
// statement's snapshot is left out of the result (its number met the
// unique index and nothing was written for it): the caller claims it again
// with Shipments and UpdateShipments.
func (t *TrackingTx) ClaimShipments(ps []ShipmentPoll) (map[string]string, error) {
	out := map[string]string{}
	if len(ps) == 0 {
		return out, nil
	}
	n := len(ps)
	req := make([]string, n)
	num := make([]string, n)
	cur := make([]sql.NullString, n)
	for i, p := range ps {
		req[i], num[i] = p.RequestID, p.Number
		if p.Current != nil {
			cur[i] = sql.NullString{String: *p.Current, Valid: true}
		}
	}
	each := func(r *requestShipment) { out[r.RequestID] = r.ShipmentID }
	// last(x): the batch's last known value of x for the shipment.
	err := selectRows(t.ctx, t.q, each, `
WITH u AS (
    SELECT * FROM unnest($2::uuid[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::timestamptz[],
        $9::timestamptz[], $10::timestamptz[], $11::timestamptz[], $12::timestamptz[], $13::timestamptz[], $14::text[],
        $15::text[], $16::text[], $17::text[]) WITH ORDINALITY
        AS u(request_id, number, current_id, pol, pod, dest, pol_etd_at, pol_atd_at, pod_eta_at, pod_ata_at, dest_eta_at,
             dest_ata_at, vessel_name, vessel_imo, voyage, pod_facility, ord)),
claim AS (
    SELECT u.*, r.scac, r.ref_numbers, r.tags, coalesce(c.id, f.id) AS shipment_id,
        coalesce(coalesce(c.id, f.id)::text, coalesce(r.scac, '') || ' ' || upper(u.number)) AS key
    FROM u JOIN tracking_requests r ON r.account_id = $1 AND r.id = u.request_id
    LEFT JOIN shipments c ON c.account_id = $1 AND c.id = u.current_id
    LEFT JOIN shipments f ON c.id IS NULL AND f.account_id = $1 AND f.shipping_line_scac = r.scac
        AND upper(f.normalized_number) = upper(u.number)),
m AS (
    SELECT key, (array_agg(shipment_id))[1] AS shipment_id, (array_agg(request_id ORDER BY ord))[1] AS first_request,
        (array_agg(request_id ORDER BY request_id))[1] AS creator,
        (array_agg(pol ORDER BY ord DESC) FILTER (WHERE pol IS NOT NULL))[1] AS pol,
        (array_agg(pod ORDER BY ord DESC) FILTER (WHERE pod IS NOT NULL))[1] AS pod,
        (array_agg(dest ORDER BY ord DESC) FILTER (WHERE dest IS NOT NULL))[1] AS dest,
        (array_agg(pol_etd_at ORDER BY ord DESC) FILTER (WHERE pol_etd_at IS NOT NULL))[1] AS pol_etd_at,
        (array_agg(pol_atd_at ORDER BY ord DESC) FILTER (WHERE pol_atd_at IS NOT NULL))[1] AS pol_atd_at,
        (array_agg(pod_eta_at ORDER BY ord DESC) FILTER (WHERE pod_eta_at IS NOT NULL))[1] AS pod_eta_at,
        (array_agg(pod_ata_at ORDER BY ord DESC) FILTER (WHERE pod_ata_at IS NOT NULL))[1] AS pod_ata_at,
        (array_agg(dest_eta_at ORDER BY ord DESC) FILTER (WHERE dest_eta_at IS NOT NULL))[1] AS dest_eta_at,
        (array_agg(dest_ata_at ORDER BY ord DESC) FILTER (WHERE dest_ata_at IS NOT NULL))[1] AS dest_ata_at,
        (array_agg(vessel_name ORDER BY ord DESC) FILTER (WHERE vessel_name IS NOT NULL))[1] AS vessel_name,
        (array_agg(vessel_imo ORDER BY ord DESC) FILTER (WHERE vessel_imo IS NOT NULL))[1] AS vessel_imo,
        (array_agg(voyage ORDER BY ord DESC) FILTER (WHERE voyage IS NOT NULL))[1] AS voyage,
        (array_agg(pod_facility ORDER BY ord DESC) FILTER (WHERE pod_facility IS NOT NULL))[1] AS pod_facility
    FROM claim GROUP BY key),
n AS (
    SELECT m.key, m.shipment_id, cr.number, cr.scac, cr.ref_numbers, cr.tags,
`+shipmentFieldsM+`    FROM m JOIN claim cr ON cr.request_id = m.creator
    LEFT JOIN shipments s ON s.account_id = $1 AND s.id = m.shipment_id
    LEFT JOIN tracking_requests r ON r.account_id = $1 AND r.id = m.first_request
    LEFT JOIN parties p ON p.account_id = $1 AND p.id = r.customer_id),
ins AS (
    INSERT INTO shipments AS s (account_id, bill_of_lading_number, normalized_number, ref_numbers, tags, shipping_line_id,
        shipping_line_scac, shipping_line_name, shipping_line_short_name,
        port_of_lading_id, port_of_lading_locode, port_of_lading_name, pol_timezone, port_of_discharge_id,
        port_of_discharge_locode, port_of_discharge_name, pod_timezone, pod_terminal_id, destination_port_id,
        destination_locode, destination_name, destination_timezone, pol_etd_at, pol_atd_at, pod_eta_at,
        pod_original_eta_at, pod_ata_at, destination_eta_at, destination_ata_at, pod_vessel_name,
        pod_vessel_imo, pod_voyage_number, customer_id, customer_name)
    SELECT $1::uuid, n.number, upper(n.number), nullif(n.ref_numbers, '{}'), n.tags, sl.id, n.scac,
        coalesce(sl.name, n.scac), coalesce(sl.short_name, n.scac),
        n.pol_id, n.pol_locode, n.pol_name, n.pol_tz, n.pod_id, n.pod_locode, n.pod_name, n.pod_tz, n.pod_terminal_id, n.dest_id,
        n.dest_locode, n.dest_name, n.dest_tz, n.pol_etd_at, n.pol_atd_at, n.pod_eta_at, n.pod_original_eta_at, n.pod_ata_at,
        n.dest_eta_at, n.dest_ata_at, n.vessel_name, n.vessel_imo, n.voyage, n.customer_id, n.customer_name
    FROM n LEFT JOIN shipping_lines sl ON sl.scac = n.scac
    WHERE n.shipment_id IS NULL
    ON CONFLICT (account_id, shipping_line_scac, upper(normalized_number)) DO NOTHING
    RETURNING s.id, s.shipping_line_scac, s.normalized_number),
upd AS (
    UPDATE shipments s SET `+shipmentSet+`
    FROM n
    WHERE s.account_id = $1 AND s.id = n.shipment_id
      AND `+shipmentChanged+`)
SELECT request_id, shipment_id AS id FROM claim WHERE shipment_id IS NOT NULL
UNION ALL SELECT claim.request_id, ins.id FROM claim JOIN ins ON claim.shipment_id IS NULL
    AND ins.shipping_line_scac = claim.scac AND upper(ins.normalized_number) = upper(claim.number)`,
		append([]any{t.account, pq.StringArray(req), pq.StringArray(num), pq.Array(cur)},
			polledArrays(n, func(i int) *PolledShipment { return &ps[i].PolledShipment })...)...)
	return out, err
}

// StopFacts is what the stop rules read of a shipment after a poll's
// writes.
type StopFacts struct {
	ShipmentID    string   `db:"id"`
	Stopped       bool     `db:"stopped"`
	StoppedReason *string  `db:"stopped_reason"`
	HasContainers bool     `db:"has_containers"`
	AllTerminated bool     `db:"all_terminated"`
	ArrivedAgo    *float64 `db:"arrived_ago"` // seconds since pod_ata_at, by the database's clock
}

// RequestShipment pairs a request with its shipment.
type RequestShipment struct{ RequestID, ShipmentID string }

// MarkCreated marks the requests created with their shipments, before
// those shipments stop (their receivers hear tracking_request.succeeded
// before .tracking_stopped). A request created and not stopped takes its
// status with the others' (SetOutcomes).
func (t *TrackingTx) MarkCreated(created []RequestShipment) error {
	if len(created) == 0 {
		return nil
	}
	req := make([]string, len(created))
	ship := make([]string, len(created))
	for i, c := range created {
		req[i], ship[i] = c.RequestID, c.ShipmentID
	}
	_, err := t.q.ExecContext(t.ctx, `
UPDATE tracking_requests r SET status = 'created', failed_reason = NULL, shipment_id = u.shipment_id,
    is_retrying = false, retry_count = 0, updated_at = now()
FROM unnest($2::uuid[], $3::uuid[]) AS u(id, shipment_id)
WHERE r.account_id = $1 AND r.id = u.id`, t.account, pq.StringArray(req), pq.StringArray(ship))
	return err
}

// stopFacts is the statement's tail that reads the stop facts of the
// shipments $2 (the containers as the batch's earlier statements left
// them).
const stopFacts = `
SELECT s.id, s.line_tracking_stopped_at IS NOT NULL AS stopped, s.line_tracking_stopped_reason AS stopped_reason,
    EXISTS (SELECT 1 FROM containers c WHERE c.account_id = $1 AND c.shipment_id = s.id) AS has_containers,
    NOT EXISTS (SELECT 1 FROM containers c WHERE c.account_id = $1 AND c.shipment_id = s.id AND c.empty_terminated_at IS NULL) AS all_terminated,
    extract(epoch FROM now() - s.pod_ata_at)::float8 AS arrived_ago
FROM shipments s WHERE s.account_id = $1 AND s.id = ANY($2::uuid[])`

// ApplyInitialCustomFields writes the staged initial custom field values
// of requests that first succeed (one statement each; only requests that
// staged values, so a batch without them costs nothing).
func (t *TrackingTx) ApplyInitialCustomFields(rs []RequestShipment) error {
	for _, r := range rs {
		if err := applyInitialCustomFields(t.ctx, t.q, t.account, r.RequestID, r.ShipmentID); err != nil {
			return err
		}
	}
	return nil
}

// applyInitialCustomFields writes the request's staged custom field values
// (initial_custom_fields, checked at create) onto its shipment and the
// shipment's containers, once, when the request first succeeds: a
// container value names one container by number or, without one, every
// container the shipment has then (one naming the container wins over
// one for all). A value the entity already has stays (someone set it);
// a definition deleted since the create is skipped.
func applyInitialCustomFields(ctx context.Context, q ext, accountID, requestID, shipmentID string) error {
	_, err := q.ExecContext(ctx, `
WITH staged AS (
    SELECT (e->>'definition_id')::uuid AS definition_id, e->>'entity' AS entity, e->'value' AS value,
        coalesce(e->>'number', '') AS number
    FROM tracking_requests r, jsonb_array_elements(r.initial_custom_fields) AS e
    WHERE r.account_id = $1 AND r.id = $2),
defs AS (
    SELECT d.id, d.entity_type FROM custom_field_definitions d
    WHERE d.account_id = $1 AND d.id IN (SELECT definition_id FROM staged)),
on_shipment AS (
    INSERT INTO custom_fields (account_id, definition_id, shipment_id, value)
    SELECT $1, st.definition_id, $3, st.value
    FROM staged st JOIN defs d ON d.id = st.definition_id AND d.entity_type = 'Shipment'
    WHERE st.entity = 'shipment'
    ON CONFLICT (account_id, definition_id, entity_id) DO NOTHING
    RETURNING 1)
INSERT INTO custom_fields (account_id, definition_id, container_id, value)
SELECT DISTINCT ON (st.definition_id, c.id) $1, st.definition_id, c.id, st.value
FROM staged st
JOIN defs d ON d.id = st.definition_id AND d.entity_type = 'Container'
JOIN containers c ON c.account_id = $1 AND c.shipment_id = $3
    AND (st.number = '' OR upper(c.number) = upper(st.number))
WHERE st.entity = 'container'
ORDER BY st.definition_id, c.id, st.number = ''
ON CONFLICT (account_id, definition_id, entity_id) DO NOTHING`, accountID, requestID, shipmentID)
	return err
}

// ShipmentStop stops a shipment's tracking for Reason.
type ShipmentStop struct{ ShipmentID, Reason string }

// StopShipments stops the tracking of the shipments not stopped yet.
func (t *TrackingTx) StopShipments(ss []ShipmentStop) error {
	if len(ss) == 0 {
		return nil
	}
	id := make([]string, len(ss))
	reason := make([]string, len(ss))
	for i, s := range ss {
		id[i], reason[i] = s.ShipmentID, s.Reason
	}
	_, err := t.q.ExecContext(t.ctx, `
UPDATE shipments s SET line_tracking_stopped_at = now(), line_tracking_stopped_reason = u.reason, updated_at = now()
FROM unnest($2::uuid[], $3::text[]) AS u(id, reason)
WHERE s.account_id = $1 AND s.id = u.id AND s.line_tracking_stopped_at IS NULL`, t.account, pq.StringArray(id), pq.StringArray(reason))
	return err
}

// RequestOutcome is a request's status after a poll and its next poll.
type RequestOutcome struct {
	RequestID    string
	Status       string
	FailedReason *string
	ShipmentID   *string    // nil: keep
	NextPollAt   *time.Time // nil: never
	// Stored: the request's row holds this status already (with no
	// retry counted): only its schedule is written.
	Stored bool
}

// SetOutcomes writes each request's status (logged, only where it
// changed, and not at all for the outcomes Stored: a poll that changed
// nothing only moves the schedule), then its schedule and its shipment's
// poll times: those change on every poll and announce nothing, and the
// change-log trigger leaves out an update of them alone (quiet columns,
// migration 00052), on every engine.
func (t *TrackingTx) SetOutcomes(os []RequestOutcome) error {
	if len(os) == 0 {
		return nil
	}
	if err := t.setStatuses(os); err != nil {
		return err
	}
	n := len(os)
	id := make([]string, n)
	for i, o := range os {
		id[i] = o.RequestID
	}
	ship := pq.Array(strsOf(n, func(i int) *string { return os[i].ShipmentID }))
	// The schedule and the shipments' poll times, in one statement.
	_, err := t.q.ExecContext(t.ctx, `
WITH u AS (SELECT * FROM unnest($2::uuid[], $3::timestamptz[], $4::uuid[]) AS u(id, next_poll_at, shipment_id)),
req AS (
    UPDATE tracking_requests r SET last_polled_at = now(), next_poll_at = u.next_poll_at
    FROM u WHERE r.account_id = $1 AND r.id = u.id RETURNING 1)
UPDATE shipments s SET line_tracking_last_attempted_at = now(), line_tracking_last_succeeded_at = now()
WHERE s.account_id = $1 AND s.id IN (SELECT u.shipment_id FROM u WHERE u.shipment_id IS NOT NULL)`,
		t.account, pq.StringArray(id), pqTimes(timesOf(n, func(i int) *time.Time { return os[i].NextPollAt })), ship)
	return err
}

// setStatuses writes the statuses of the outcomes not Stored (logged,
// only where they changed); none: no statement.
func (t *TrackingTx) setStatuses(all []RequestOutcome) error {
	var os []RequestOutcome
	for _, o := range all {
		if !o.Stored {
			os = append(os, o)
		}
	}
	if len(os) == 0 {
		return nil
	}
	n := len(os)
	id := make([]string, n)
	status := make([]string, n)
	for i, o := range os {
		id[i], status[i] = o.RequestID, o.Status
	}
	failed := pq.Array(strsOf(n, func(i int) *string { return os[i].FailedReason }))
	ship := pq.Array(strsOf(n, func(i int) *string { return os[i].ShipmentID }))
	_, err := t.q.ExecContext(t.ctx, `
UPDATE tracking_requests r SET status = u.status, failed_reason = u.failed_reason, shipment_id = coalesce(u.shipment_id, r.shipment_id),
    is_retrying = false, retry_count = 0, updated_at = now()
FROM unnest($2::uuid[], $3::text[], $4::text[], $5::uuid[]) AS u(id, status, failed_reason, shipment_id)
WHERE r.account_id = $1 AND r.id = u.id
  AND (r.status, r.failed_reason, r.shipment_id, r.is_retrying, r.retry_count)
      IS DISTINCT FROM (u.status, u.failed_reason, coalesce(u.shipment_id, r.shipment_id), false, 0)`,
		t.account, pq.StringArray(id), pq.StringArray(status), failed, ship)
	return err
}

// UpsertVessels inserts the vessels not known yet (by IMO) and refreshes
// the names, call signs and flags of the known ones where they differ: the
// number inserted. Vessels are shared by every account (a reference table
// on Citus), so this is its own statement, outside any account's
// transaction: a new vessel's row is not held by one poll's transaction
// while every other poll of that vessel's shipments waits for it, and a
// distributed database writes its reference table once, not inside a
// shard's transaction.
func (db *DB) UpsertVessels(ctx context.Context, vs []PolledVessel) (int, error) {
	return upsertVessels(ctx, db.write(""), vs)
}

// upsertVessels inserts the vessels not known yet (by IMO) and refreshes
// the names, call signs and flags of the known ones where they differ.
// Not ON CONFLICT DO UPDATE: that locks every known vessel's row until
// commit, even unchanged, and serialised every poll of the shipments of
// one vessel (measured: 7 polls/s with 10 workers).
func upsertVessels(ctx context.Context, q ext, vs []PolledVessel) (int, error) {
	if len(vs) == 0 {
		return 0, nil
	}
	imo := make([]string, len(vs))
	name := make([]string, len(vs))
	call := make([]sql.NullString, len(vs))
	flag := make([]sql.NullString, len(vs))
	for i, v := range vs {
		imo[i], name[i] = v.IMO, v.Name
		if v.CallSign != nil {
			call[i] = sql.NullString{String: *v.CallSign, Valid: true}
		}
		if v.Flag != nil {
			flag[i] = sql.NullString{String: *v.Flag, Valid: true}
		}
	}
	var n int
	err := q.QueryRowxContext(ctx, `
WITH input AS (SELECT DISTINCT ON (imo) imo, name, call_sign, flag
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS u(imo, name, call_sign, flag) ORDER BY imo),
ins AS (
    INSERT INTO vessels (imo, name, call_sign, flag) SELECT imo, name, call_sign, flag FROM input
    ON CONFLICT (imo) DO NOTHING
    RETURNING 1),
upd AS (
    UPDATE vessels v SET name = i.name, call_sign = coalesce(i.call_sign, v.call_sign),
        flag = coalesce(i.flag, v.flag), updated_at = now()
    FROM input i
    WHERE v.imo = i.imo AND (v.name, v.call_sign, v.flag) IS DISTINCT FROM
          (i.name, coalesce(i.call_sign, v.call_sign), coalesce(i.flag, v.flag))
    RETURNING 1)
SELECT (SELECT count(*) FROM ins) + 0 * (SELECT count(*) FROM upd)`, pq.StringArray(imo), pq.StringArray(name), pq.Array(call), pq.Array(flag)).Scan(&n)
	return n, err
}

func timesOf(n int, get func(i int) *time.Time) []sql.NullTime {
	out := make([]sql.NullTime, n)
	for i := range out {
		if t := get(i); t != nil {
			out[i] = sql.NullTime{Time: *t, Valid: true}
		}
	}
	return out
}

func strsOf(n int, get func(i int) *string) []sql.NullString {
	out := make([]sql.NullString, n)
	for i := range out {
		if s := get(i); s != nil {
			out[i] = sql.NullString{String: *s, Valid: true}
		}
	}
	return out
}

// pqTimes is a timestamptz[] parameter with NULLs.
type pqTimes []sql.NullTime

func (a pqTimes) Value() (any, error) {
	s := make([]sql.NullString, len(a))
	for i, t := range a {
		if t.Valid {
			s[i] = sql.NullString{String: t.Time.UTC().Format(time.RFC3339Nano), Valid: true}
		}
	}
	return pq.Array(s).Value()
}

// ContainerUpdate is what a poll says about one container of a shipment,
// with the facility and UN/LOCODE of the shipment's port of discharge
// (its POD terminal).
type ContainerUpdate struct {
	ShipmentID  string
	PodFacility *string
	PodLocode   *string
	PolledContainer
}

// Containers inserts the containers not stored yet (by shipment and
// number) and writes the carrier's milestones of the others where they
// differ; known values replace, unknown ones keep. One row per shipment
// and number.
func (t *TrackingTx) Containers(cs []ContainerUpdate) error {
	if len(cs) == 0 {
		return nil
	}
	n := len(cs)
	ship := make([]string, n)
	number := make([]string, n)
	length := make([]sql.NullInt64, n)
	for i, c := range cs {
		ship[i], number[i] = c.ShipmentID, c.Number
		if c.EquipmentLength != nil {
			length[i] = sql.NullInt64{Int64: int64(*c.EquipmentLength), Valid: true}
		}
	}
	s := func(get func(c *ContainerUpdate) *string) any {
		return pq.Array(strsOf(n, func(i int) *string { return get(&cs[i]) }))
	}
	tm := func(get func(c *ContainerUpdate) *time.Time) any {
		return pqTimes(timesOf(n, func(i int) *time.Time { return get(&cs[i]) }))
	}
	_, err := t.q.ExecContext(t.ctx, `
WITH input AS (
    SELECT u.*, (SELECT t.id FROM terminals t JOIN ports p ON p.id = t.port_id
        WHERE p.code = u.pod_locode AND u.pod_facility IN (t.firms_code, t.smdg_code, t.bic_facility_code) ORDER BY t.id LIMIT 1) AS term_id
    FROM unnest($2::uuid[], $3::text[], $4::text[], $5::int[], $6::text[], $7::timestamptz[], $8::timestamptz[], $9::timestamptz[],
        $10::timestamptz[], $11::timestamptz[], $12::timestamptz[], $13::timestamptz[], $14::timestamptz[], $15::text[], $16::text[], $17::text[])
        AS u(shipment_id, number, equipment_type, equipment_length, equipment_height, pod_arrived_at, pod_discharged_at, pod_full_out_at,
             empty_terminated_at, pod_rail_loaded_at, pod_rail_departed_at, ind_eta_at, ind_ata_at, current_status, pod_facility, pod_locode)),
n AS (
    SELECT c.id, coalesce(u.equipment_type, c.equipment_type) AS equipment_type,
        coalesce(u.equipment_length, c.equipment_length) AS equipment_length,
        coalesce(u.equipment_height, c.equipment_height) AS equipment_height,
        coalesce(u.term_id, c.pod_terminal_id) AS pod_terminal_id,
        coalesce(u.pod_arrived_at, c.pod_arrived_at) AS pod_arrived_at,
        coalesce(u.pod_discharged_at, c.pod_discharged_at) AS pod_discharged_at,
        coalesce(u.pod_full_out_at, c.pod_full_out_at) AS pod_full_out_at,
        coalesce(u.empty_terminated_at, c.empty_terminated_at) AS empty_terminated_at,
        coalesce(u.pod_rail_loaded_at, c.pod_rail_loaded_at) AS pod_rail_loaded_at,
        coalesce(u.pod_rail_departed_at, c.pod_rail_departed_at) AS pod_rail_departed_at,
        coalesce(u.ind_eta_at, c.ind_eta_at) AS ind_eta_at, coalesce(u.ind_ata_at, c.ind_ata_at) AS ind_ata_at,
        coalesce(u.current_status, c.current_status) AS current_status
    FROM containers c JOIN input u ON c.account_id = $1 AND c.shipment_id = u.shipment_id AND c.number = u.number),
upd AS (
    UPDATE containers c SET equipment_type = n.equipment_type, equipment_length = n.equipment_length,
        equipment_height = n.equipment_height, pod_terminal_id = n.pod_terminal_id, pod_arrived_at = n.pod_arrived_at,
        pod_discharged_at = n.pod_discharged_at, pod_full_out_at = n.pod_full_out_at, empty_terminated_at = n.empty_terminated_at,
        pod_rail_loaded_at = n.pod_rail_loaded_at, pod_rail_departed_at = n.pod_rail_departed_at, ind_eta_at = n.ind_eta_at,
        ind_ata_at = n.ind_ata_at, current_status = n.current_status, updated_at = now()
    FROM n
    WHERE c.account_id = $1 AND c.id = n.id
      AND (c.equipment_type, c.equipment_length, c.equipment_height, c.pod_terminal_id, c.pod_arrived_at, c.pod_discharged_at,
           c.pod_full_out_at, c.empty_terminated_at, c.pod_rail_loaded_at, c.pod_rail_departed_at, c.ind_eta_at, c.ind_ata_at,
           c.current_status)
      IS DISTINCT FROM
          (n.equipment_type, n.equipment_length, n.equipment_height, n.pod_terminal_id, n.pod_arrived_at, n.pod_discharged_at,
           n.pod_full_out_at, n.empty_terminated_at, n.pod_rail_loaded_at, n.pod_rail_departed_at, n.ind_eta_at, n.ind_ata_at,
           n.current_status)
    RETURNING c.id)
INSERT INTO containers (account_id, shipment_id, number, equipment_type, equipment_length, equipment_height, pod_terminal_id,
    pod_arrived_at, pod_discharged_at, pod_full_out_at, empty_terminated_at, pod_rail_loaded_at, pod_rail_departed_at,
    ind_eta_at, ind_ata_at, current_status)
SELECT $1, u.shipment_id, u.number, u.equipment_type, u.equipment_length, u.equipment_height, u.term_id, u.pod_arrived_at,
    u.pod_discharged_at, u.pod_full_out_at, u.empty_terminated_at, u.pod_rail_loaded_at, u.pod_rail_departed_at,
    u.ind_eta_at, u.ind_ata_at, coalesce(u.current_status, 'new')
FROM input u
WHERE NOT EXISTS (SELECT 1 FROM containers c WHERE c.account_id = $1 AND c.shipment_id = u.shipment_id AND c.number = u.number)
ON CONFLICT (account_id, shipment_id, number) DO NOTHING`,
		t.account, pq.StringArray(ship), pq.StringArray(number),
		s(func(c *ContainerUpdate) *string { return c.EquipmentType }), pq.Array(length),
		s(func(c *ContainerUpdate) *string { return c.EquipmentHeight }),
		tm(func(c *ContainerUpdate) *time.Time { return c.PodArrivedAt }),
		tm(func(c *ContainerUpdate) *time.Time { return c.PodDischargedAt }),
		tm(func(c *ContainerUpdate) *time.Time { return c.PodFullOutAt }),
		tm(func(c *ContainerUpdate) *time.Time { return c.EmptyTerminatedAt }),
		tm(func(c *ContainerUpdate) *time.Time { return c.PodRailLoadedAt }),
		tm(func(c *ContainerUpdate) *time.Time { return c.PodRailDepartedAt }),
		tm(func(c *ContainerUpdate) *time.Time { return c.IndEtaAt }),
		tm(func(c *ContainerUpdate) *time.Time { return c.IndAtaAt }),
		s(func(c *ContainerUpdate) *string { return c.CurrentStatus }),
		s(func(c *ContainerUpdate) *string { return c.PodFacility }), s(func(c *ContainerUpdate) *string { return c.PodLocode }))
	return err
}

// EventInsert is one carrier event of a shipment's container.
type EventInsert struct {
	ShipmentID string
	PolledEvent
}

// Events inserts the raw events not stored yet (by account, container,
// SCAC and carrier event id) and, for each one inserted that maps to one,
// its transport event: a poll repeated adds nothing. An estimate the
// container holds already as a transport event (same event, time and
// place: a carrier that publishes it again under a new id) adds its raw
// event only. In the same statement it reads the stop facts of the
// shipments (the events change none of them), by shipment id. Each row's
// raw event id is drawn beforehand, so that its transport event needs no
// join with the raw events inserted: a raw event another transaction
// inserted meanwhile fails the statement (the transport event's key to
// it), and the poll, retried, finds it stored.
func (t *TrackingTx) Events(es []EventInsert, shipments []string) (map[string]StopFacts, error) {
	facts := map[string]StopFacts{}
	each := func(f *StopFacts) { facts[f.ShipmentID] = *f }
	if len(es) == 0 {
		return facts, selectRows(t.ctx, t.q, each, stopFacts, t.account, pq.StringArray(shipments))
	}
	n := len(es)
	ship := make([]string, n)
	number := make([]string, n)
	id := make([]string, n)
	event := make([]string, n)
	orig := make([]string, n)
	est := make([]bool, n)
	pos := make([]int64, n)
	payload := make([]string, n)
	for i, e := range es {
		ship[i], number[i], id[i], event[i], orig[i], est[i], pos[i] = e.ShipmentID, e.ContainerNumber, e.CarrierEventID, e.Event,
			e.OriginalEvent, e.Estimated, int64(e.Position)
		payload[i] = string(e.Payload)
	}
	s := func(get func(e *EventInsert) *string) any {
		return pq.Array(strsOf(n, func(i int) *string { return get(&es[i]) }))
	}
	// The places, terminals and vessels are looked up once per statement
	// (a poll's events name a few of each), not once per event.
	err := selectRows(t.ctx, t.q, each, `
WITH u AS MATERIALIZED (
    SELECT * FROM unnest($3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bool[], $9::timestamptz[], $10::text[], $11::text[],
        $12::text[], $13::text[], $14::text[], $15::text[], $16::int[], $17::jsonb[], $18::text[])
        AS u(shipment_id, number, carrier_event_id, event, original_event, estimated, event_at, location_name, locode, facility,
             vessel_imo, vessel_name, voyage, position, payload, transport_event)),
place AS (
    SELECT k.locode, k.facility, p.id AS port_id, p.time_zone,
        (SELECT t.id FROM terminals t
            WHERE t.port_id = p.id AND k.facility IN (t.firms_code, t.smdg_code, t.bic_facility_code) ORDER BY t.id LIMIT 1) AS terminal_id
    FROM (SELECT DISTINCT locode, facility FROM u WHERE locode IS NOT NULL) k JOIN ports p ON p.code = k.locode),
vessel AS (SELECT v.imo, v.id FROM vessels v WHERE v.imo IN (SELECT DISTINCT vessel_imo FROM u)),
input AS (
    SELECT u.*, c.id AS container_id, s.shipping_line_scac AS scac, gen_random_uuid() AS raw_id,
        pl.port_id, pl.time_zone AS timezone, v.id AS vessel_id, pl.terminal_id,
        EXISTS (SELECT 1 FROM raw_events x WHERE x.account_id = $1 AND x.container_id = c.id
            AND x.scac = s.shipping_line_scac AND x.carrier_event_id = u.carrier_event_id) AS stored,
        (u.estimated AND EXISTS (SELECT 1 FROM transport_events t
            WHERE t.account_id = $1 AND t.container_id = c.id AND t.event = u.transport_event
              AND t.event_at IS NOT DISTINCT FROM u.event_at AND t.location_locode IS NOT DISTINCT FROM u.locode)) AS held
    FROM u
    JOIN containers c ON c.account_id = $1 AND c.shipment_id = u.shipment_id AND c.number = u.number
    JOIN shipments s ON s.account_id = $1 AND s.id = u.shipment_id
    LEFT JOIN place pl ON pl.locode = u.locode AND pl.facility IS NOT DISTINCT FROM u.facility
    LEFT JOIN vessel v ON v.imo = u.vessel_imo),
raw AS (
    INSERT INTO raw_events (account_id, id, container_id, shipment_id, scac, carrier_event_id, event, original_event, estimated,
        event_at, timezone, location_name, location_locode, port_id, vessel_id, vessel_name, vessel_imo, voyage_number,
        position, payload)
    SELECT $1, i.raw_id, i.container_id, i.shipment_id, i.scac, i.carrier_event_id, i.event, i.original_event, i.estimated, i.event_at,
        i.timezone, i.location_name, i.locode, i.port_id, i.vessel_id, i.vessel_name, i.vessel_imo, i.voyage, i.position, i.payload
    FROM input i WHERE NOT i.stored
    ON CONFLICT (account_id, container_id, scac, carrier_event_id) DO NOTHING),
te AS (
    INSERT INTO transport_events (account_id, container_id, shipment_id, raw_event_id, scac, carrier_event_id, event,
        event_at, timezone, location_locode, port_id, terminal_id, vessel_id, voyage_number)
    SELECT $1, i.container_id, i.shipment_id, i.raw_id, i.scac, i.carrier_event_id, i.transport_event, i.event_at,
        i.timezone, i.locode, i.port_id, i.terminal_id, i.vessel_id, i.voyage
    FROM input i
    WHERE NOT i.stored AND i.transport_event IS NOT NULL AND NOT i.held
    ON CONFLICT (account_id, container_id, scac, carrier_event_id) DO NOTHING)`+stopFacts,
		t.account, pq.StringArray(shipments), pq.StringArray(ship), pq.StringArray(number), pq.StringArray(id), pq.StringArray(event), pq.StringArray(orig),
		pq.BoolArray(est), pqTimes(timesOf(n, func(i int) *time.Time { return es[i].EventAt })),
		s(func(e *EventInsert) *string { return e.LocationName }), s(func(e *EventInsert) *string { return e.Locode }),
		s(func(e *EventInsert) *string { return e.Facility }), s(func(e *EventInsert) *string { return e.VesselIMO }),
		s(func(e *EventInsert) *string { return e.VesselName }), s(func(e *EventInsert) *string { return e.VoyageNumber }),
		pq.Int64Array(pos), pq.StringArray(payload), s(func(e *EventInsert) *string { return e.TransportEvent }))
	return facts, err
}

// TrackingRetry is a failed poll's bookkeeping.
type TrackingRetry struct {
	AccountID, RequestID string
	// NextPollAt is when to try again.
	NextPollAt time.Time
	// MaxRetries: the retry that reaches it ends a request that was never
	// tracked (pending, awaiting_manifest) as failed with FailReason; a
	// tracked (created) one keeps its status and goes back to its regular
	// schedule (Regular).
	MaxRetries int
	FailReason string
	Regular    time.Time
	// Final fails the request at once (FailReason), whatever its count.
	Final bool
}

// RecordTrackingRetry counts a failed poll of a live request: is_retrying
// and retry_count, the next poll, or the end described in r. It returns
// the request's status after it ("" when the request is not live).
func (db *DB) RecordTrackingRetry(ctx context.Context, r TrackingRetry) (status string, retries int, err error) {
	err = db.write(r.AccountID).QueryRowxContext(ctx, `
UPDATE tracking_requests SET
    status = CASE WHEN status <> 'created' AND ($6::bool OR retry_count + 1 >= $4::int) THEN 'failed' ELSE status END,
    failed_reason = CASE WHEN status <> 'created' AND ($6 OR retry_count + 1 >= $4) THEN $5::text END,
    is_retrying = NOT ($6 OR retry_count + 1 >= $4),
    retry_count = CASE WHEN status = 'created' AND retry_count + 1 >= $4 THEN 0 ELSE retry_count + 1 END,
    last_polled_at = now(),
    next_poll_at = CASE WHEN status <> 'created' AND ($6 OR retry_count + 1 >= $4) THEN NULL
                        WHEN retry_count + 1 >= $4 THEN $7::timestamptz ELSE $3::timestamptz END,
    updated_at = now()
WHERE account_id = $1 AND id = $2 AND status IN ('pending', 'awaiting_manifest', 'created')
RETURNING status, retry_count`, r.AccountID, r.RequestID, r.NextPollAt, r.MaxRetries, r.FailReason, r.Final, r.Regular).Scan(&status, &retries)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, nil
	}
	return status, retries, err
}

// DueTracking is a request due for a poll.
type DueTracking struct {
	AccountID string `db:"account_id"`
	ID        string `db:"id"`
}

// ClaimDueTrackingRequests takes up to limit live requests whose
// next_poll_at has passed, moves their next_poll_at lease ahead (a poll
// that never reports back, its process dead, makes the request due again
// after it; a quiet column, which the change log leaves out), and runs enqueue with them in the
// same transaction, so a request is either enqueued or still due. It
// works account by account, as a distributed database (Citus) routes
// statements: the accounts with due requests are read without a lock
// (the one statement across accounts), then each account's due requests
// are claimed FOR UPDATE SKIP LOCKED by a statement on that account alone,
// claimAccountsPerTx accounts to a transaction: with one transaction for
// every account, the polls of a round with many accounts waited for all
// of their claims (one statement each, a round trip to a worker on a
// cluster, where 400 accounts took longer than 30 s) and the commit was a
// two-phase commit over every shard.
func (db *DB) ClaimDueTrackingRequests(ctx context.Context, limit int, lease time.Duration,
	enqueue func(ctx context.Context, tx *sql.Tx, due []DueTracking) error) (int, error) {
	var accounts []string
	err := selectRows(ctx, db.write(""), func(a *DueTracking) { accounts = append(accounts, a.AccountID) }, `
SELECT account_id, '' AS id FROM tracking_requests
WHERE next_poll_at <= now() AND status IN ('pending', 'awaiting_manifest', 'created')
GROUP BY account_id ORDER BY min(next_poll_at) LIMIT $1`, limit)
	if err != nil || len(accounts) == 0 {
		return 0, err
	}
	n := 0
	for len(accounts) > 0 && n < limit {
		chunk := accounts[:min(claimAccountsPerTx, len(accounts))]
		accounts = accounts[len(chunk):]
		var due []DueTracking
		err = db.inRawTx(ctx, "", func(q ext, tx *sql.Tx) error {
			due = nil
			for _, a := range chunk {
				if n+len(due) >= limit {
					break
				}
				err := selectRows(ctx, db.preparedIn(q), func(d *DueTracking) { due = append(due, *d) }, `
UPDATE tracking_requests r SET next_poll_at = now() + make_interval(secs => $3)
WHERE r.account_id = $1 AND r.id = ANY(ARRAY(SELECT id FROM tracking_requests
      WHERE account_id = $1 AND next_poll_at <= now() AND status IN ('pending', 'awaiting_manifest', 'created')
      ORDER BY next_poll_at, id LIMIT $2 FOR UPDATE SKIP LOCKED))
RETURNING r.account_id, r.id`, a, limit-n-len(due), lease.Seconds())
				if err != nil {
					return err
				}
			}
			if len(due) == 0 {
				return nil
			}
			return enqueue(ctx, tx, due)
		})
		if err != nil {
			return n, err
		}
		n += len(due)
	}
	return n, nil
}

// The due ids are picked once (an uncorrelated ARRAY subquery): as a
// subquery joined in UPDATE … FROM it could run again for each row it
// joined, and each run, skipping the rows just moved ahead, picked others:
// more than its LIMIT were claimed.
//
// claimAccountsPerTx is how many accounts' claims share a transaction in
// ClaimDueTrackingRequests: their polls start when it commits.
const claimAccountsPerTx = 16

// TrackingRequestsOfContainer returns the live requests of the account
// that track the container's shipment (refresh).
func (db *DB) TrackingRequestsOfContainer(ctx context.Context, accountID, containerID string) ([]DueTracking, bool, error) {
	if !validUUID(accountID) || !validUUID(containerID) {
		return nil, false, nil
	}
	var out []DueTracking
	found := false
	err := selectRows(ctx, db.read(accountID), func(d *DueTracking) {
		found = true
		if d.ID != "" {
			out = append(out, *d)
		}
	}, `SELECT c.account_id, coalesce(r.id::text, '') AS id
		FROM containers c
		LEFT JOIN tracking_requests r ON r.account_id = c.account_id AND r.shipment_id = c.shipment_id
		     AND r.status IN ('pending', 'awaiting_manifest', 'created')
		WHERE c.account_id = $1 AND c.id = $2`, accountID, containerID)
	return out, found, err
}
