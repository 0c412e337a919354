package db

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/lib/pq"
)

// The tracking engine's statements (carrier/tracking): what a poll of a
// carrier writes, in one transaction, and the schedule of the requests.
// The scheduler's read (DueTrackingRequests) is cross-tenant by design: it
// serves every account; every key it uses carries account_id.

// ErrTrackingBusy is returned by ApplyTrackingPoll when another
// transaction holds the request (another instance is applying a poll of
// it): the caller tries again later, nothing was written.
var ErrTrackingBusy = errors.New("tracking request locked by another poll")

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

// TrackingPoll is the outcome of one successful answer of a carrier, to be
// applied at once.
type TrackingPoll struct {
	AccountID, RequestID string
	// Status: created, awaiting_manifest or failed (FailedReason).
	Status       string
	FailedReason *string
	Shipment     *PolledShipment // nil unless created
	Containers   []PolledContainer
	Events       []PolledEvent
	Vessels      []PolledVessel
	// NextPollAt is when to look again (nil: never).
	NextPollAt *time.Time
	// StopAfterArrival: tracking stops once the shipment arrived this long
	// ago (past_arrival_window); 0 never.
	StopAfterArrival time.Duration
}

// TrackingPollResult says what a poll changed.
type TrackingPollResult struct {
	Status      string
	ShipmentID  *string
	StopReason  *string
	NewEvents   int
	NewVessels  int
	Containers  int
	RequestGone bool // the request ended (or was deleted) before the poll applied
}

func ptrTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return *t
}

func nullStr(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// ApplyTrackingPoll writes a poll's outcome in one transaction: the
// request is locked (FOR UPDATE SKIP LOCKED: ErrTrackingBusy when another
// poll holds it), the shipment found or created, its containers upserted,
// vessels upserted by IMO, raw and transport events inserted once per
// carrier event id, the milestones updated where they changed, tracking
// stopped by the shipment's rules, and the request's status and schedule
// written. The schedule and the line_tracking_last_* times are written
// without a change-log entry: they change on every poll and announce
// nothing to anyone; every other change is logged as any write is. then,
// when set, runs in the same transaction (transactional enqueueing).
func (db *DB) ApplyTrackingPoll(ctx context.Context, p TrackingPoll, then func(ctx context.Context, tx *sql.Tx) error) (TrackingPollResult, error) {
	var res TrackingPollResult
	err := db.inRawTx(ctx, p.AccountID, func(q ext, tx *sql.Tx) error {
		var status string
		var shipmentID *string
		var staged bool
		err := q.QueryRowxContext(ctx, `SELECT status, shipment_id, initial_custom_fields IS NOT NULL FROM tracking_requests
			WHERE account_id = $1 AND id = $2 FOR UPDATE SKIP LOCKED`, p.AccountID, p.RequestID).Scan(&status, &shipmentID, &staged)
		if errors.Is(err, sql.ErrNoRows) {
			// Locked by another poll, or gone: tell them apart.
			var exists bool
			if err := q.QueryRowxContext(ctx, `SELECT EXISTS (SELECT 1 FROM tracking_requests WHERE account_id = $1 AND id = $2)`,
				p.AccountID, p.RequestID).Scan(&exists); err != nil {
				return err
			}
			if exists {
				return ErrTrackingBusy
			}
			res.RequestGone = true
			return nil
		}
		if err != nil {
			return err
		}
		if status == "failed" || status == "tracking_stopped" {
			res.RequestGone = true
			res.Status = status
			return nil
		}
		res.Status = p.Status
		if p.Shipment != nil {
			if shipmentID, err = findOrCreateShipment(ctx, q, p.AccountID, shipmentID, status, p.Shipment.BillOfLadingNumber, p.RequestID); err != nil {
				return err
			}
			if err := fillShipmentCustomer(ctx, q, p.AccountID, *shipmentID, p.RequestID); err != nil {
				return err
			}
			vessels, err := upsertVessels(ctx, q, p.Vessels)
			if err != nil {
				return err
			}
			res.NewVessels = vessels
			if err := updateShipmentMilestones(ctx, q, p.AccountID, *shipmentID, p.Shipment); err != nil {
				return err
			}
			if res.Containers, err = upsertContainers(ctx, q, p.AccountID, *shipmentID, p.Containers, p.Shipment.PodFacility, p.Shipment.PodLocode); err != nil {
				return err
			}
			if res.NewEvents, err = insertEvents(ctx, q, p.AccountID, *shipmentID, p.Events); err != nil {
				return err
			}
			// A request the carrier just answered is created before
			// anything may stop it, so its receivers hear
			// tracking_request.succeeded before .tracking_stopped, even
			// for a voyage that ended long ago.
			if p.Status == "created" && status != "created" {
				if _, err := q.ExecContext(ctx, `UPDATE tracking_requests SET status = 'created', failed_reason = NULL,
					shipment_id = $3, is_retrying = false, retry_count = 0, updated_at = now()
					WHERE account_id = $1 AND id = $2`, p.AccountID, p.RequestID, *shipmentID); err != nil {
					return err
				}
				if staged {
					if err := applyInitialCustomFields(ctx, q, p.AccountID, p.RequestID, *shipmentID); err != nil {
						return err
					}
				}
			}
			var reason *string
			if err := q.QueryRowxContext(ctx, `
WITH stop AS (
    UPDATE shipments s SET line_tracking_stopped_at = now(),
        line_tracking_stopped_reason = CASE WHEN NOT EXISTS (SELECT 1 FROM containers c
            WHERE c.account_id = $1 AND c.shipment_id = $2 AND c.empty_terminated_at IS NULL)
            THEN 'all_containers_terminated' ELSE 'past_arrival_window' END,
        updated_at = now()
    WHERE s.account_id = $1 AND s.id = $2 AND s.line_tracking_stopped_at IS NULL
      AND ((EXISTS (SELECT 1 FROM containers c WHERE c.account_id = $1 AND c.shipment_id = $2)
            AND NOT EXISTS (SELECT 1 FROM containers c WHERE c.account_id = $1 AND c.shipment_id = $2 AND c.empty_terminated_at IS NULL))
        OR ($3::float8 > 0 AND s.pod_ata_at < now() - make_interval(secs => $3::float8)))
    RETURNING s.line_tracking_stopped_reason)
SELECT coalesce((SELECT line_tracking_stopped_reason FROM stop),
    (SELECT line_tracking_stopped_reason FROM shipments WHERE account_id = $1 AND id = $2 AND line_tracking_stopped_at IS NOT NULL),
    CASE WHEN EXISTS (SELECT 1 FROM shipments WHERE account_id = $1 AND id = $2 AND line_tracking_stopped_at IS NOT NULL)
         THEN 'cancelled_by_user' END)`,
				p.AccountID, *shipmentID, p.StopAfterArrival.Seconds()).Scan(&reason); err != nil {
				return err
			}
			if reason != nil {
				res.StopReason = reason
				res.Status = "tracking_stopped"
				p.NextPollAt = nil
			}
		}
		res.ShipmentID = shipmentID
		var failed any
		if res.Status == "failed" {
			failed = nullStr(p.FailedReason)
			p.NextPollAt = nil
		}
		// The public change (status, shipment, retries) is logged; a poll
		// that changed none of them only moves the schedule, quietly.
		if _, err := q.ExecContext(ctx, `UPDATE tracking_requests SET status = $3, failed_reason = $4,
			shipment_id = coalesce($5::uuid, shipment_id), is_retrying = false, retry_count = 0, updated_at = now()
			WHERE account_id = $1 AND id = $2
			  AND (status, failed_reason, shipment_id, is_retrying, retry_count)
			      IS DISTINCT FROM ($3, $4, coalesce($5::uuid, shipment_id), false, 0)`,
			p.AccountID, p.RequestID, res.Status, failed, shipmentID); err != nil {
			return err
		}
		// The change log off (its AFTER triggers fire at the end of the
		// statement, once set_config has run), then the schedule and the
		// shipment's poll times, in one statement.
		if _, err := q.ExecContext(ctx, `
WITH quiet AS (SELECT set_config('shipgraph.notify', 'off', true) AS off),
req AS (
    UPDATE tracking_requests SET last_polled_at = now(), next_poll_at = $3
    FROM quiet WHERE account_id = $1 AND id = $2 RETURNING 1)
UPDATE shipments SET line_tracking_last_attempted_at = now(), line_tracking_last_succeeded_at = now()
FROM quiet WHERE account_id = $1 AND id = $4::uuid`, p.AccountID, p.RequestID, ptrTime(p.NextPollAt), nullStr(shipmentID)); err != nil {
			return err
		}
		if then != nil {
			return then(ctx, tx)
		}
		return nil
	})
	return res, err
}

// quiet turns the change log off for the rest of the transaction.
func quiet(ctx context.Context, q ext) error {
	_, err := q.ExecContext(ctx, `SELECT set_config('shipgraph.notify', 'off', true)`)
	return err
}

// findOrCreateShipment returns the request's shipment: the one it already
// has, else the account's shipment of that number and carrier, else a new
// one. One shipment per (account, carrier, number) is a unique index
// (migration 00023): two polls creating it at once meet there, the second
// one's insert waits for the first and then does nothing, and its next
// statement, whose snapshot is newer than the first's commit, reads the
// winner's row.
func findOrCreateShipment(ctx context.Context, q ext, accountID string, current *string, status, number, requestID string) (*string, error) {
	if current != nil {
		var id string
		err := q.QueryRowxContext(ctx, `SELECT id FROM shipments WHERE account_id = $1 AND id = $2`, accountID, *current).Scan(&id)
		if err == nil {
			return &id, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
	}
	var id string
	err := q.QueryRowxContext(ctx, `
WITH req AS (SELECT r.scac, r.ref_numbers, r.tags FROM tracking_requests r WHERE r.account_id = $1 AND r.id = $3),
found AS (
    SELECT s.id FROM shipments s, req
    WHERE s.account_id = $1 AND s.shipping_line_scac = req.scac AND upper(s.normalized_number) = upper($2)),
ins AS (
    INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number, ref_numbers, tags, shipping_line_id,
        shipping_line_scac, shipping_line_name, shipping_line_short_name)
    SELECT $1, $2, upper($2), nullif(req.ref_numbers, '{}'), req.tags, sl.id, req.scac,
        coalesce(sl.name, req.scac), coalesce(sl.short_name, req.scac)
    FROM req LEFT JOIN shipping_lines sl ON sl.scac = req.scac
    WHERE NOT EXISTS (SELECT 1 FROM found)
    ON CONFLICT (account_id, shipping_line_scac, upper(normalized_number)) DO NOTHING
    RETURNING id)
SELECT id FROM found UNION ALL SELECT id FROM ins`, accountID, number, requestID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		// Another poll created it after this statement's snapshot.
		err = q.QueryRowxContext(ctx, `SELECT s.id FROM shipments s JOIN tracking_requests r ON r.account_id = s.account_id
			AND r.scac = s.shipping_line_scac
			WHERE s.account_id = $1 AND r.id = $3 AND upper(s.normalized_number) = upper($2)`, accountID, number, requestID).Scan(&id)
	}
	if err != nil {
		return nil, err
	}
	return &id, nil
}

// fillShipmentCustomer copies the request's customer (a party) onto its
// shipment when the shipment has none: a shipment the request created, or
// one it found or was linked to without a customer. A shipment that
// already has a customer keeps it (another request, or a person, chose
// it; the first customer stands). customer_name, the shipment's searched
// attribute, takes the party's company name when it is empty. A shipment
// that has its customer, or a request without one, writes nothing, so the
// repeated polls of a tracked request log no change.
func fillShipmentCustomer(ctx context.Context, q ext, accountID, shipmentID, requestID string) error {
	_, err := q.ExecContext(ctx, `
UPDATE shipments s SET customer_id = r.customer_id,
    customer_name = coalesce(nullif(btrim(s.customer_name), ''), p.company_name), updated_at = now()
FROM tracking_requests r
JOIN parties p ON p.account_id = r.account_id AND p.id = r.customer_id
WHERE s.account_id = $1 AND s.id = $2 AND s.customer_id IS NULL
  AND r.account_id = $1 AND r.id = $3`, accountID, shipmentID, requestID)
	return err
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

// updateShipmentMilestones writes what the carrier said about the
// shipment where it differs from what is stored: known values replace,
// unknown ones keep. The first ETA ever seen stays pod_original_eta_at.
func updateShipmentMilestones(ctx context.Context, q ext, accountID, id string, s *PolledShipment) error {
	_, err := q.ExecContext(ctx, `
WITH n AS (
    SELECT coalesce((SELECT p.id FROM ports p WHERE p.code = $3), s.port_of_lading_id) AS pol_id,
        coalesce($3, s.port_of_lading_locode) AS pol_locode,
        coalesce((SELECT p.name FROM ports p WHERE p.code = $3), s.port_of_lading_name) AS pol_name,
        coalesce((SELECT p.time_zone FROM ports p WHERE p.code = $3), s.pol_timezone) AS pol_tz,
        coalesce((SELECT p.id FROM ports p WHERE p.code = $4), s.port_of_discharge_id) AS pod_id,
        coalesce($4, s.port_of_discharge_locode) AS pod_locode,
        coalesce((SELECT p.name FROM ports p WHERE p.code = $4), s.port_of_discharge_name) AS pod_name,
        coalesce((SELECT p.time_zone FROM ports p WHERE p.code = $4), s.pod_timezone) AS pod_tz,
        coalesce((SELECT t.id FROM terminals t JOIN ports p ON p.id = t.port_id
            WHERE p.code = $4 AND $15 IN (t.firms_code, t.smdg_code, t.bic_facility_code) ORDER BY t.id LIMIT 1), s.pod_terminal_id) AS pod_terminal_id,
        CASE WHEN $5::text IS NULL THEN s.destination_port_id ELSE (SELECT p.id FROM ports p WHERE p.code = $5) END AS dest_id,
        coalesce($5, s.destination_locode) AS dest_locode,
        CASE WHEN $5::text IS NULL THEN s.destination_name ELSE coalesce((SELECT p.name FROM ports p WHERE p.code = $5), $5) END AS dest_name,
        coalesce((SELECT p.time_zone FROM ports p WHERE p.code = $5), s.destination_timezone) AS dest_tz,
        coalesce($6::timestamptz, s.pol_etd_at) AS pol_etd_at, coalesce($7::timestamptz, s.pol_atd_at) AS pol_atd_at,
        coalesce($8::timestamptz, s.pod_eta_at) AS pod_eta_at, coalesce(s.pod_original_eta_at, $8::timestamptz) AS pod_original_eta_at,
        coalesce($9::timestamptz, s.pod_ata_at) AS pod_ata_at,
        coalesce($10::timestamptz, s.destination_eta_at) AS dest_eta_at, coalesce($11::timestamptz, s.destination_ata_at) AS dest_ata_at,
        coalesce($12, s.pod_vessel_name) AS vessel_name, coalesce($13, s.pod_vessel_imo) AS vessel_imo,
        coalesce($14, s.pod_voyage_number) AS voyage
    FROM shipments s WHERE s.account_id = $1 AND s.id = $2)
UPDATE shipments s SET port_of_lading_id = n.pol_id, port_of_lading_locode = n.pol_locode, port_of_lading_name = n.pol_name,
    pol_timezone = n.pol_tz, port_of_discharge_id = n.pod_id, port_of_discharge_locode = n.pod_locode,
    port_of_discharge_name = n.pod_name, pod_timezone = n.pod_tz, pod_terminal_id = n.pod_terminal_id,
    destination_port_id = n.dest_id, destination_metro_area_id = CASE WHEN n.dest_id IS NULL THEN s.destination_metro_area_id END,
    destination_locode = n.dest_locode, destination_name = n.dest_name, destination_timezone = n.dest_tz,
    pol_etd_at = n.pol_etd_at, pol_atd_at = n.pol_atd_at, pod_eta_at = n.pod_eta_at, pod_original_eta_at = n.pod_original_eta_at,
    pod_ata_at = n.pod_ata_at, destination_eta_at = n.dest_eta_at, destination_ata_at = n.dest_ata_at,
    pod_vessel_name = n.vessel_name, pod_vessel_imo = n.vessel_imo, pod_voyage_number = n.voyage, updated_at = now()
FROM n
WHERE s.account_id = $1 AND s.id = $2
  AND (s.port_of_lading_id, s.port_of_lading_locode, s.port_of_lading_name, s.pol_timezone, s.port_of_discharge_id,
       s.port_of_discharge_locode, s.port_of_discharge_name, s.pod_timezone, s.pod_terminal_id, s.destination_port_id,
       s.destination_locode, s.destination_name, s.destination_timezone, s.pol_etd_at, s.pol_atd_at, s.pod_eta_at,
       s.pod_original_eta_at, s.pod_ata_at, s.destination_eta_at, s.destination_ata_at, s.pod_vessel_name,
       s.pod_vessel_imo, s.pod_voyage_number)
  IS DISTINCT FROM
      (n.pol_id, n.pol_locode, n.pol_name, n.pol_tz, n.pod_id, n.pod_locode, n.pod_name, n.pod_tz, n.pod_terminal_id, n.dest_id,
       n.dest_locode, n.dest_name, n.dest_tz, n.pol_etd_at, n.pol_atd_at, n.pod_eta_at, n.pod_original_eta_at, n.pod_ata_at,
       n.dest_eta_at, n.dest_ata_at, n.vessel_name, n.vessel_imo, n.voyage)`,
		accountID, id, nullStr(s.PolLocode), nullStr(s.PodLocode), nullStr(s.DestinationLocode),
		ptrTime(s.PolEtdAt), ptrTime(s.PolAtdAt), ptrTime(s.PodEtaAt), ptrTime(s.PodAtaAt),
		ptrTime(s.DestinationEtaAt), ptrTime(s.DestinationAtaAt),
		nullStr(s.VesselName), nullStr(s.VesselIMO), nullStr(s.VoyageNumber), nullStr(s.PodFacility))
	return err
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

// upsertContainers inserts the shipment's containers not stored yet (by
// number) and writes the carrier's milestones of the others where they
// differ; known values replace, unknown ones keep.
func upsertContainers(ctx context.Context, q ext, accountID, shipmentID string, cs []PolledContainer, podFacility, podLocode *string) (int, error) {
	if len(cs) == 0 {
		return 0, nil
	}
	n := len(cs)
	number := make([]string, n)
	length := make([]sql.NullInt64, n)
	for i, c := range cs {
		number[i] = c.Number
		if c.EquipmentLength != nil {
			length[i] = sql.NullInt64{Int64: int64(*c.EquipmentLength), Valid: true}
		}
	}
	_, err := q.ExecContext(ctx, `
WITH input AS (
    SELECT * FROM unnest($3::text[], $4::text[], $5::int[], $6::text[], $7::timestamptz[], $8::timestamptz[], $9::timestamptz[],
        $10::timestamptz[], $11::timestamptz[], $12::timestamptz[], $13::timestamptz[], $14::timestamptz[], $15::text[])
        AS u(number, equipment_type, equipment_length, equipment_height, pod_arrived_at, pod_discharged_at, pod_full_out_at,
             empty_terminated_at, pod_rail_loaded_at, pod_rail_departed_at, ind_eta_at, ind_ata_at, current_status)),
term AS (
    SELECT (SELECT t.id FROM terminals t JOIN ports p ON p.id = t.port_id
        WHERE p.code = $17 AND $16 IN (t.firms_code, t.smdg_code, t.bic_facility_code) ORDER BY t.id LIMIT 1) AS id),
n AS (
    SELECT c.id, coalesce(u.equipment_type, c.equipment_type) AS equipment_type,
        coalesce(u.equipment_length, c.equipment_length) AS equipment_length,
        coalesce(u.equipment_height, c.equipment_height) AS equipment_height,
        coalesce(term.id, c.pod_terminal_id) AS pod_terminal_id,
        coalesce(u.pod_arrived_at, c.pod_arrived_at) AS pod_arrived_at,
        coalesce(u.pod_discharged_at, c.pod_discharged_at) AS pod_discharged_at,
        coalesce(u.pod_full_out_at, c.pod_full_out_at) AS pod_full_out_at,
        coalesce(u.empty_terminated_at, c.empty_terminated_at) AS empty_terminated_at,
        coalesce(u.pod_rail_loaded_at, c.pod_rail_loaded_at) AS pod_rail_loaded_at,
        coalesce(u.pod_rail_departed_at, c.pod_rail_departed_at) AS pod_rail_departed_at,
        coalesce(u.ind_eta_at, c.ind_eta_at) AS ind_eta_at, coalesce(u.ind_ata_at, c.ind_ata_at) AS ind_ata_at,
        coalesce(u.current_status, c.current_status) AS current_status
    FROM containers c JOIN input u ON u.number = c.number CROSS JOIN term
    WHERE c.account_id = $1 AND c.shipment_id = $2),
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
SELECT $1, $2, u.number, u.equipment_type, u.equipment_length, u.equipment_height, term.id, u.pod_arrived_at,
    u.pod_discharged_at, u.pod_full_out_at, u.empty_terminated_at, u.pod_rail_loaded_at, u.pod_rail_departed_at,
    u.ind_eta_at, u.ind_ata_at, coalesce(u.current_status, 'new')
FROM input u CROSS JOIN term
WHERE NOT EXISTS (SELECT 1 FROM containers c WHERE c.account_id = $1 AND c.shipment_id = $2 AND c.number = u.number)
ON CONFLICT (account_id, shipment_id, number) DO NOTHING`,
		accountID, shipmentID, pq.StringArray(number),
		pq.Array(strsOf(n, func(i int) *string { return cs[i].EquipmentType })), pq.Array(length),
		pq.Array(strsOf(n, func(i int) *string { return cs[i].EquipmentHeight })),
		pqTimes(timesOf(n, func(i int) *time.Time { return cs[i].PodArrivedAt })),
		pqTimes(timesOf(n, func(i int) *time.Time { return cs[i].PodDischargedAt })),
		pqTimes(timesOf(n, func(i int) *time.Time { return cs[i].PodFullOutAt })),
		pqTimes(timesOf(n, func(i int) *time.Time { return cs[i].EmptyTerminatedAt })),
		pqTimes(timesOf(n, func(i int) *time.Time { return cs[i].PodRailLoadedAt })),
		pqTimes(timesOf(n, func(i int) *time.Time { return cs[i].PodRailDepartedAt })),
		pqTimes(timesOf(n, func(i int) *time.Time { return cs[i].IndEtaAt })),
		pqTimes(timesOf(n, func(i int) *time.Time { return cs[i].IndAtaAt })),
		pq.Array(strsOf(n, func(i int) *string { return cs[i].CurrentStatus })),
		nullStr(podFacility), nullStr(podLocode))
	return n, err
}

// insertEvents inserts the raw events not stored yet (by account,
// container, SCAC and carrier event id) and, for each one inserted that
// maps to one, its transport event: a poll repeated adds nothing. An
// estimate the container holds already as a transport event (same event,
// time and place: a carrier that publishes it again under a new id) adds
// its raw event only.
func insertEvents(ctx context.Context, q ext, accountID, shipmentID string, es []PolledEvent) (int, error) {
	if len(es) == 0 {
		return 0, nil
	}
	n := len(es)
	number := make([]string, n)
	id := make([]string, n)
	event := make([]string, n)
	orig := make([]string, n)
	est := make([]bool, n)
	pos := make([]int64, n)
	payload := make([]string, n)
	for i, e := range es {
		number[i], id[i], event[i], orig[i], est[i], pos[i] = e.ContainerNumber, e.CarrierEventID, e.Event, e.OriginalEvent, e.Estimated, int64(e.Position)
		payload[i] = string(e.Payload)
	}
	var inserted int
	err := q.QueryRowxContext(ctx, `
WITH input AS (
    SELECT u.*, c.id AS container_id, s.shipping_line_scac AS scac,
        (SELECT p.id FROM ports p WHERE p.code = u.locode) AS port_id,
        (SELECT v.id FROM vessels v WHERE v.imo = u.vessel_imo) AS vessel_id,
        (SELECT t.id FROM terminals t JOIN ports p ON p.id = t.port_id
            WHERE p.code = u.locode AND u.facility IN (t.firms_code, t.smdg_code, t.bic_facility_code) ORDER BY t.id LIMIT 1) AS terminal_id
    FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::bool[], $8::timestamptz[], $9::text[], $10::text[],
        $11::text[], $12::text[], $13::text[], $14::text[], $15::int[], $16::jsonb[], $17::text[])
        AS u(number, carrier_event_id, event, original_event, estimated, event_at, location_name, locode, facility,
             vessel_imo, vessel_name, voyage, position, payload, transport_event)
    JOIN containers c ON c.account_id = $1 AND c.shipment_id = $2 AND c.number = u.number
    JOIN shipments s ON s.account_id = $1 AND s.id = $2),
raw AS (
    INSERT INTO raw_events (account_id, container_id, shipment_id, scac, carrier_event_id, event, original_event, estimated,
        event_at, timezone, location_name, location_locode, port_id, vessel_id, vessel_name, vessel_imo, voyage_number,
        position, payload)
    SELECT $1, i.container_id, $2, i.scac, i.carrier_event_id, i.event, i.original_event, i.estimated, i.event_at,
        (SELECT p.time_zone FROM ports p WHERE p.id = i.port_id), i.location_name, i.locode, i.port_id, i.vessel_id,
        i.vessel_name, i.vessel_imo, i.voyage, i.position, i.payload
    FROM input i
    ON CONFLICT (account_id, container_id, scac, carrier_event_id) DO NOTHING
    RETURNING id, container_id, carrier_event_id),
te AS (
    INSERT INTO transport_events (account_id, container_id, shipment_id, raw_event_id, scac, carrier_event_id, event,
        event_at, timezone, location_locode, port_id, terminal_id, vessel_id, voyage_number)
    SELECT $1, i.container_id, $2, r.id, i.scac, i.carrier_event_id, i.transport_event, i.event_at,
        (SELECT p.time_zone FROM ports p WHERE p.id = i.port_id), i.locode, i.port_id, i.terminal_id, i.vessel_id, i.voyage
    FROM raw r JOIN input i ON i.container_id = r.container_id AND i.carrier_event_id = r.carrier_event_id
    WHERE i.transport_event IS NOT NULL
      AND NOT (i.estimated AND EXISTS (SELECT 1 FROM transport_events t
          WHERE t.account_id = $1 AND t.container_id = i.container_id AND t.event = i.transport_event
            AND t.event_at IS NOT DISTINCT FROM i.event_at AND t.location_locode IS NOT DISTINCT FROM i.locode))
    ON CONFLICT (account_id, container_id, scac, carrier_event_id) DO NOTHING
    RETURNING id)
SELECT (SELECT count(*) FROM raw) + 0 * (SELECT count(*) FROM te)`,
		accountID, shipmentID, pq.StringArray(number), pq.StringArray(id), pq.StringArray(event), pq.StringArray(orig),
		pq.BoolArray(est), pqTimes(timesOf(n, func(i int) *time.Time { return es[i].EventAt })),
		pq.Array(strsOf(n, func(i int) *string { return es[i].LocationName })),
		pq.Array(strsOf(n, func(i int) *string { return es[i].Locode })),
		pq.Array(strsOf(n, func(i int) *string { return es[i].Facility })),
		pq.Array(strsOf(n, func(i int) *string { return es[i].VesselIMO })),
		pq.Array(strsOf(n, func(i int) *string { return es[i].VesselName })),
		pq.Array(strsOf(n, func(i int) *string { return es[i].VoyageNumber })),
		pq.Int64Array(pos), pq.StringArray(payload),
		pq.Array(strsOf(n, func(i int) *string { return es[i].TransportEvent }))).Scan(&inserted)
	return inserted, err
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
// next_poll_at has passed, whatever their account, moves their
// next_poll_at lease ahead (a poll that never reports back, its process
// dead, makes the request due again after it) without a change-log entry,
// and runs enqueue with them in the same transaction, so a request is
// either enqueued or still due.
func (db *DB) ClaimDueTrackingRequests(ctx context.Context, limit int, lease time.Duration,
	enqueue func(ctx context.Context, tx *sql.Tx, due []DueTracking) error) (int, error) {
	var n int
	err := db.inRawTx(ctx, "", func(q ext, tx *sql.Tx) error {
		if err := quiet(ctx, q); err != nil {
			return err
		}
		var due []DueTracking
		err := selectRows(ctx, q, func(d *DueTracking) { due = append(due, *d) }, `
UPDATE tracking_requests r SET next_poll_at = now() + make_interval(secs => $2)
FROM (SELECT account_id, id FROM tracking_requests
      WHERE next_poll_at <= now() AND status IN ('pending', 'awaiting_manifest', 'created')
      ORDER BY next_poll_at LIMIT $1 FOR UPDATE SKIP LOCKED) d
WHERE r.account_id = d.account_id AND r.id = d.id
RETURNING r.account_id, r.id`, limit, lease.Seconds())
		if err != nil || len(due) == 0 {
			return err
		}
		n = len(due)
		return enqueue(ctx, tx, due)
	})
	return n, err
}

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
