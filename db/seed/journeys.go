package seed

import (
	"fmt"
	"slices"
	"time"

	"github.com/lib/pq"
)

// seedJourneyShipments caps the shipments whose containers get a journey:
// every one of a demo seed, the first ones (by id) of a bench-scale seed,
// whose journeys would otherwise be most of its rows and time.
const seedJourneyShipments = 2000

// The journeys are written with set-based SQL once the shipments and
// containers are in and indexed: each container of the first
// seedJourneyShipments shipments (by id; the generator keeps their ids,
// seedJourneyChoice) gets the milestones its shipment's and its own times
// tell (empty out, full in, loaded and departed at the port of lading,
// arrived, discharged, full out and empty in at the port of discharge; an
// ETD or ETA not yet met is an estimated event), one raw event per
// milestone (DCSA-like codes, vessel name and IMO on the vessel moves) and
// its transport event. The vessels are the shipments' (their IMO numbers
// have valid check digits, seedIMO), at a position between the ports of
// lading and discharge while a shipment is at sea. Ids are name-based (md5
// of the container and the milestone), so the same seed gives the same ids.
//
// One text serves plain PostgreSQL and a Citus coordinator: the chosen ids
// come as a parameter (an ORDER BY … LIMIT over the distributed shipments
// inside the INSERT cannot be pushed down), the events' INSERT … SELECT
// joins shipments and containers on the account (colocated, so each shard
// group inserts its own rows) and reads only reference tables besides, and
// the milestones' VALUES hold immutable expressions only (Citus refuses
// others there: timestamptz minus an interval is stable, so the offset is
// added outside the VALUES).

// seedJourneyLegs is the milestones of the chosen containers ($2, the
// shipments' ids), one row per milestone with a time.
const seedJourneyLegs = `
WITH legs AS (
	SELECT c.account_id, c.id AS container_id, s.id AS shipment_id, s.shipping_line_scac AS scac, m.n, m.event,
	       m.estimated, m.at0 + m.off AS at, m.original,
	       CASE WHEN m.at_pol THEN s.port_of_lading_id ELSE s.port_of_discharge_id END AS port_id,
	       CASE WHEN m.at_pol THEN s.pol_timezone ELSE s.pod_timezone END AS timezone,
	       CASE WHEN m.at_pol THEN NULL ELSE s.pod_terminal_id END AS terminal_id,
	       CASE WHEN m.vessel THEN s.pod_vessel_name END AS vessel_name,
	       CASE WHEN m.vessel THEN s.pod_vessel_imo END AS vessel_imo,
	       CASE WHEN m.vessel THEN s.pod_voyage_number END AS voyage_number,
	       greatest(c.created_at, least(m.at0 + m.off, $1::timestamptz)) AS created_at
	FROM shipments s
	JOIN containers c ON c.account_id = s.account_id AND c.shipment_id = s.id
	CROSS JOIN LATERAL (VALUES
		(1, 'empty_out', false, coalesce(s.pol_atd_at, s.pol_etd_at), interval '-6 days', 'GATE OUT EMPTY', true, false),
		(2, 'full_in', false, coalesce(s.pol_atd_at, s.pol_etd_at), interval '-4 days', 'GATE IN FULL', true, false),
		(3, 'vessel_loaded', false, coalesce(s.pol_atd_at, s.pol_etd_at), interval '-1 day', 'EQUIPMENT LOAD ACT', true, true),
		(4, 'vessel_departed', s.pol_atd_at IS NULL, coalesce(s.pol_atd_at, s.pol_etd_at), interval '0',
		    CASE WHEN s.pol_atd_at IS NULL THEN 'TRANSPORT DEPA EST' ELSE 'TRANSPORT DEPA ACT' END, true, true),
		(5, 'vessel_arrived', s.pod_ata_at IS NULL, coalesce(s.pod_ata_at, s.pod_eta_at), interval '0',
		    CASE WHEN s.pod_ata_at IS NULL THEN 'TRANSPORT ARRI EST' ELSE 'TRANSPORT ARRI ACT' END, false, true),
		(6, 'vessel_discharged', false, c.pod_discharged_at, interval '0', 'EQUIPMENT DISC ACT', false, true),
		(7, 'full_out', false, c.pod_full_out_at, interval '0', 'GATE OUT FULL', false, false),
		(8, 'empty_in', false, c.empty_terminated_at, interval '0', 'GATE IN EMPTY', false, false)
	) AS m (n, event, estimated, at0, off, original, at_pol, vessel)
	WHERE s.id = ANY ($2::uuid[]) AND m.at0 IS NOT NULL AND (m.estimated OR m.at0 + m.off <= $1::timestamptz)
	  AND s.port_of_lading_id IS NOT NULL AND s.port_of_discharge_id IS NOT NULL
)`

func seedJourneyID(kind string) string {
	return seedNameUUID(`l.container_id::text || '/` + kind + `/' || l.n`)
}

// seedNameUUID is the SQL of a name-based UUID of the text expression
// name: its md5 with the version (4) and variant bits of a random UUID, so
// it is a well-formed one.
func seedNameUUID(name string) string {
	return `overlay(overlay(md5(` + name + `) placing '4' from 13) placing '8' from 17)::uuid`
}

var seedJourneyStatements = []string{
	// The vessels of the chosen shipments, at sea between their ports
	// while one of them sails.
	`INSERT INTO vessels (id, imo, name, mmsi, latitude, longitude, nautical_speed_knots, navigational_heading_degrees,
	                     position_timestamp, created_at, updated_at)
	SELECT DISTINCT ON (s.pod_vessel_imo) ` + seedNameUUID(`'vessel/' || s.pod_vessel_imo`) + `, s.pod_vessel_imo, s.pod_vessel_name,
	       '2' || substr(s.pod_vessel_imo, 1, 7) || '0',
	       CASE WHEN sea THEN pol.latitude + (pod.latitude - pol.latitude) * f END,
	       CASE WHEN sea THEN pol.longitude + (pod.longitude - pol.longitude) * f END,
	       CASE WHEN sea THEN 14.5 END,
	       CASE WHEN sea THEN mod((degrees(atan2(pod.longitude - pol.longitude, pod.latitude - pol.latitude)) + 360)::numeric, 360)::float8 END,
	       CASE WHEN sea THEN $1::timestamptz END, $1::timestamptz, $1::timestamptz
	FROM shipments s
	JOIN ports pol ON pol.id = s.port_of_lading_id
	JOIN ports pod ON pod.id = s.port_of_discharge_id
	CROSS JOIN LATERAL (SELECT s.pol_atd_at IS NOT NULL AND s.pod_ata_at IS NULL AND s.pod_eta_at > $1::timestamptz
	                           AND pol.latitude IS NOT NULL AND pod.latitude IS NOT NULL AS sea,
	                           least(1, greatest(0, extract(epoch FROM $1::timestamptz - s.pol_atd_at) /
	                               nullif(extract(epoch FROM s.pod_eta_at - s.pol_atd_at), 0))) AS f) x
	WHERE s.id = ANY ($2::uuid[]) AND s.pod_vessel_imo ~ '^[0-9]{7}$' AND s.pod_vessel_name IS NOT NULL
	ORDER BY s.pod_vessel_imo, x.sea DESC, s.id`,
	seedJourneyLegs + `
	INSERT INTO raw_events (account_id, id, container_id, shipment_id, scac, carrier_event_id, event, original_event,
	                        estimated, event_at, timezone, location_name, location_locode, port_id, vessel_id, vessel_name,
	                        vessel_imo, voyage_number, position, payload, created_at)
	SELECT l.account_id, ` + seedJourneyID("raw") + `, l.container_id, l.shipment_id, l.scac,
	       'SEED-' || l.n, l.event, l.original, l.estimated, l.at, l.timezone, p.name, p.code, l.port_id,
	       v.id, l.vessel_name, l.vessel_imo, l.voyage_number, l.n,
	       jsonb_build_object('eventClassifierCode', CASE WHEN l.estimated THEN 'EST' ELSE 'ACT' END,
	                          'eventDateTime', l.at, 'eventLocation', jsonb_build_object('UNLocationCode', p.code)),
	       l.created_at
	FROM legs l JOIN ports p ON p.id = l.port_id
	LEFT JOIN vessels v ON v.imo = l.vessel_imo`,
	seedJourneyLegs + `
	INSERT INTO transport_events (account_id, id, container_id, shipment_id, raw_event_id, scac, carrier_event_id, event,
	                              event_at, timezone, location_locode, port_id, terminal_id, vessel_id, voyage_number,
	                              data_source, created_at)
	SELECT l.account_id, ` + seedJourneyID("transport") + `, l.container_id, l.shipment_id, ` + seedJourneyID("raw") + `,
	       l.scac, 'SEED-' || l.n,
	       'container.transport.' || CASE WHEN l.estimated THEN 'estimated.' ELSE '' END || l.event,
	       l.at, l.timezone, p.code, l.port_id, l.terminal_id, v.id, l.voyage_number,
	       CASE WHEN l.n IN (7, 8) THEN 'terminal' ELSE 'shipping_line' END, l.created_at
	FROM legs l JOIN ports p ON p.id = l.port_id
	LEFT JOIN vessels v ON v.imo = l.vessel_imo`,
}

// copyJourneys writes the vessels and the journeys of the chosen
// shipments' containers (see seedJourneyLegs).
func (s *seeder) copyJourneys(now time.Time, chosen []string) error {
	for _, stmt := range seedJourneyStatements {
		res, err := s.q.ExecContext(s.ctx, stmt, now, pq.Array(chosen))
		if err != nil {
			return fmt.Errorf("seed: journeys: %w", err)
		}
		n, _ := res.RowsAffected()
		s.rows += n
	}
	return nil
}

// seedJourneyChoice adds ids to chosen and keeps the
// seedJourneyShipments smallest: the same order as PostgreSQL's on uuid
// (bytes), as the ids are lower-case canonical text.
func seedJourneyChoice(chosen, ids []string) []string {
	chosen = slices.Compact(slices.Sorted(slices.Values(append(chosen, ids...))))
	return chosen[:min(len(chosen), seedJourneyShipments)]
}
