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
//
// One over several accounts (InTrackingTxs' first argument, plain
// PostgreSQL only) has no account of its own: its Lock and ApplyPolls
// take each request's account and write the polls of them all in one
// statement each (its rendering, sql).
type TrackingTx struct {
	ctx     context.Context
	q       ext
	account string      // "": several accounts, each poll's own
	sql     trackingSQL // the rendering of Lock's and ApplyPolls' statements
	pooled  bool        // behind a pooler: parameters travel binary (textArgs)
}

// trackingSQL is a rendering of a TrackingTx's statements, chosen once
// when the TrackingTx is made (InTrackingTxs): over one account every
// row's account is $1, the TrackingTx's (the text Citus and a pooler
// get); over several, $1 is an array of each row's account, parallel to
// its other arrays (accountsArg).
type trackingSQL struct {
	lock    string // Lock's statement
	busy    string // Lock's re-read of the requests it did not take
	apply   string // ApplyPolls'
	several bool   // $1 is each row's account
}

// The renderings: over one account; the same on plain PostgreSQL, whose
// Lock also sets plan_cache_mode (lockRequestsGenericSQL); over several
// accounts (plain PostgreSQL only).
var (
	oneAccountSQL        = trackingSQL{lock: lockRequestsSQL, busy: busyRequestsSQL, apply: applyPollsSQL}
	oneAccountGenericSQL = trackingSQL{lock: lockRequestsGenericSQL, busy: busyRequestsSQL, apply: applyPollsSQL}
	accountsSQL          = trackingSQL{lock: lockRequestsAccountsSQL, busy: busyRequestsAccountsSQL, apply: applyPollsAccountsSQL,
		several: true}
)

// accountsArg is $1 of t's statements over n rows, the i-th of account
// of(i): the TrackingTx's account, or (over several) an array of the
// rows' accounts.
func (t *TrackingTx) accountsArg(n int, of func(i int) string) string {
	if !t.sql.several {
		return t.account
	}
	return quotedArray(n, func(i int) (string, bool) { return of(i), true })
}

// InTrackingTx runs fn in one transaction of the account's tracking
// writes (InTrackingTxs of one account): fn's error rolls everything back.
func (db *DB) InTrackingTx(ctx context.Context, accountID string, fn func(tx *TrackingTx) error) error {
	return db.InTrackingTxs(ctx, []string{accountID}, func(_ *TrackingTx, txs []*TrackingTx) error { return fn(txs[0]) })
}

// InTrackingTxs runs fn in one transaction of several accounts' tracking
// writes, one TrackingTx per account in the order given (each one's
// statements name its account): one BEGIN, one COMMIT and one set of
// relation locks for the polls of them all. The caller orders the
// accounts (two such transactions then take the accounts' rows in one
// order) and gives more than one only where GroupsAccounts says so.
// With more than one, all is a TrackingTx over them all, whose Lock and
// ApplyPolls are one statement for every account's polls (each poll
// names its account); nil with one account.
//
// Its statements run prepared (prepared_tx.go), on plain PostgreSQL on a
// connection held between these transactions (trackingConns:
// HoldTrackingConns says how many).
func (db *DB) InTrackingTxs(ctx context.Context, accounts []string, fn func(all *TrackingTx, txs []*TrackingTx) error) error {
	held := db.held.take(ctx, db.db)
	err := db.transactBy(ctx, held.begin(ctx, db.db), "", func(err error) error { return err }, func(q ext, _ *sql.Tx) error {
		// Generic plans (TrackingTx.Lock) under the same condition as the
		// grouping: plain PostgreSQL with its statements prepared.
		q, one := db.preparedIn(q), oneAccountSQL
		if db.GroupsAccounts() {
			one = oneAccountGenericSQL
		}
		txs := make([]*TrackingTx, len(accounts))
		for i, a := range accounts {
			txs[i] = &TrackingTx{ctx: ctx, q: q, account: a, sql: one, pooled: db.pooled}
		}
		var all *TrackingTx
		if len(accounts) > 1 && db.GroupsAccounts() {
			all = &TrackingTx{ctx: ctx, q: q, sql: accountsSQL, pooled: db.pooled}
		}
		// Each account's change-log rows are numbered at commit (00056's
		// deferred trigger); on plain PostgreSQL its first firing takes
		// every pending account's head in account order (00070), whatever
		// order the one statement for every account logged them in: two
		// such transactions sharing accounts take the heads in one order.
		return fn(all, txs)
	})
	db.held.give(held, err == nil)
	if err != nil {
		return err
	}
	for _, a := range accounts {
		if db.r != nil {
			db.r.wrote(ctx, a)
		}
		db.w.wrote(a)
	}
	return nil
}

// GroupsAccounts reports whether one transaction may write several
// accounts' polls (InTrackingTxs): on plain PostgreSQL (DB.plain, found
// when the store was opened). On Citus each account's rows live on its
// shard and a transaction over several would be a distributed (two-phase)
// one; behind a pooler each account keeps its own transaction, as it did
// when the server was asked only on a prepared transaction's connection.
func (db *DB) GroupsAccounts() bool { return db.plain && !db.pooled }

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
// applying a poll of them); an id in neither was deleted. accounts are
// the ids' accounts, read only by a TrackingTx over several accounts
// (nil otherwise), whose one statement locks the rows in the order of
// (account, id).
//
// On plain PostgreSQL (not behind a pooler) it also sets plan_cache_mode
// to force_generic_plan for the rest of the transaction (set_config local,
// in the same statement: no round trip). The transaction's statements are
// prepared on its connection (preparedTx); PostgreSQL plans a prepared
// statement's first five executions for their arguments before it
// settles on the generic plan it keeps, and ApplyPolls' statement costs
// more to plan than to run: each connection planned it five times instead
// of once. The generic plan is the one every later poll runs anyway; the
// row triggers' statements in the transaction take theirs at once too.
// Not on Citus: there the poll's statements failed with it (could not
// create distributed plan, in TestStatementsFilterByAccount).
func (t *TrackingTx) Lock(accounts, ids []string) (locked map[string]LockedRequest, busy []string, err error) {
	locked = map[string]LockedRequest{}
	err = selectRows(t.ctx, t.q, func(r *LockedRequest) { locked[r.ID] = *r }, t.sql.lock,
		t.accountsArg(len(ids), func(i int) string { return accounts[i] }), pq.StringArray(ids))
	if err != nil || len(locked) == len(ids) {
		return locked, nil, err
	}
	var missing []string
	var at []int // missing's indexes in ids
	for i, id := range ids {
		if _, ok := locked[id]; !ok {
			missing, at = append(missing, id), append(at, i)
		}
	}
	err = selectRows(t.ctx, t.q, func(r *LockedRequest) { busy = append(busy, r.ID) }, t.sql.busy,
		t.accountsArg(len(at), func(i int) string { return accounts[at[i]] }), pq.StringArray(missing))
	return locked, busy, err
}

// lockRequestsSQL is Lock's statement; lockRequestsGenericSQL is the same
// with plan_cache_mode set to force_generic_plan for the rest of the
// transaction (set_config local, joined as a one-row subquery);
// lockRequestsAccountsSQL the generic one over several accounts ($1 each
// request's account), which takes the rows in the order of (account, id).
// busyRequestsSQL and busyRequestsAccountsSQL are Lock's re-read of the
// requests it did not take, over one account and over several.
var (
	lockRequestsSQL, lockRequestsGenericSQL, lockRequestsAccountsSQL = lockRequestsOf("", false),
		lockRequestsOf(lockGeneric, false), lockRequestsOf(lockGeneric, true)
	busyRequestsSQL, busyRequestsAccountsSQL = busyRequestsOf(false), busyRequestsOf(true)
)

const lockGeneric = ", (SELECT set_config('plan_cache_mode', 'force_generic_plan', true)) g"

func lockRequestsOf(also string, several bool) string {
	order := ""
	if several {
		order = ` ORDER BY r.account_id, r.id`
	}
	return `SELECT r.id, r.status, r.failed_reason, r.shipment_id, r.is_retrying, r.retry_count,
			r.initial_custom_fields IS NOT NULL AS staged
		FROM tracking_requests r` + also + `
		WHERE ` + requestsOf("r.", several) + order + ` FOR UPDATE OF r SKIP LOCKED`
}

func busyRequestsOf(several bool) string {
	return `SELECT id, '' AS status, NULL AS failed_reason, NULL::uuid AS shipment_id, false AS is_retrying, 0 AS retry_count,
		false AS staged FROM tracking_requests WHERE ` + requestsOf("", several)
}

// requestsOf is the condition on the requests' rows (their columns
// prefixed by p) that they are $2's, of the account $1 or (several) each
// of its account in $1.
func requestsOf(p string, several bool) string {
	if several {
		return `(` + p + `account_id, ` + p + `id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[]))`
	}
	return p + `account_id = $1 AND ` + p + `id = ANY($2::uuid[])`
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
		return textArray(n, func(i int) *string { return get(at(i)) })
	}
	tm := func(get func(p *PolledShipment) *time.Time) any {
		return timeArray(n, func(i int) *time.Time { return get(at(i)) })
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
		t.textArgs(append([]any{t.account, pq.StringArray(id), pq.StringArray(req)},
			polledArrays(n, func(i int) *PolledShipment { return &us[i].PolledShipment })...))...)
	return err
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

// UpsertVessels inserts the vessels not known yet (by IMO) and refreshes
// the names, call signs and flags of the known ones where they differ: the
// number inserted. Vessels are shared by every account (a reference table
// on Citus), so this is its own statement, outside any account's
// transaction: a new vessel's row is not held by one poll's transaction
// while every other poll of that vessel's shipments waits for it, and a
// distributed database writes its reference table once, not inside a
// shard's transaction. On Citus two such statements at once can deadlock
// (40P01: each takes the reference table's shard lock for its insert,
// then in a stronger mode for its update); the one PostgreSQL ends is
// sent again, a few times (the statement is idempotent). The engine
// sends one at a time per process; this is for two processes.
func (db *DB) UpsertVessels(ctx context.Context, vs []PolledVessel) (int, error) {
	for try := 1; ; try++ {
		n, err := upsertVessels(ctx, db.write(""), vs)
		if try == vesselTries || !Victim(err) {
			return n, err
		}
	}
}

// vesselTries is how often UpsertVessels sends its statement when it is
// the victim of a deadlock.
const vesselTries = 3

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
//
// enqueue returns the requests it enqueued no poll for (one was already
// waiting or running): they are due again after recheck, not the lease.
func (db *DB) ClaimDueTrackingRequests(ctx context.Context, limit int, lease, recheck time.Duration,
	enqueue func(ctx context.Context, tx *sql.Tx, due []DueTracking) (skipped []DueTracking, err error)) (int, error) {
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
			skipped, err := enqueue(ctx, tx, due)
			if err != nil {
				return err
			}
			return recheckTrackingRequests(ctx, db.preparedIn(q), skipped, recheck)
		})
		if err != nil {
			return n, err
		}
		n += len(due)
	}
	return n, nil
}

// recheckTrackingRequests makes claimed requests due again after recheck,
// by a statement for each account (Citus routes it to the account's shard).
func recheckTrackingRequests(ctx context.Context, q ext, reqs []DueTracking, recheck time.Duration) error {
	ids := map[string][]string{}
	var accounts []string
	for _, r := range reqs {
		if ids[r.AccountID] == nil {
			accounts = append(accounts, r.AccountID)
		}
		ids[r.AccountID] = append(ids[r.AccountID], r.ID)
	}
	for _, a := range accounts {
		if _, err := q.ExecContext(ctx, `UPDATE tracking_requests SET next_poll_at = now() + make_interval(secs => $3)
WHERE account_id = $1 AND id = ANY($2::uuid[])`, a, pq.StringArray(ids[a]), recheck.Seconds()); err != nil {
			return err
		}
	}
	return nil
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
