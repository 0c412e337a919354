package seed_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lib/pq"

	"shipgraph/carrier/numbers"
	"shipgraph/db"
	"shipgraph/db/seed"
	"shipgraph/model"
	"shipgraph/testkit/pg"
)

// seedNow is the seeds' "today", so runs compare equal whatever the date.
var seedNow = time.Date(2025, 6, 2, 0, 0, 0, 0, time.UTC)

// seedTables are all the tables a seed writes.
var seedTables = []string{"ports", "metro_areas", "terminals", "rail_terminals", "shipping_lines", "accounts",
	"users", "api_tokens", "custom_field_definitions", "custom_field_options", "shipments", "containers",
	"email_submissions", "documents", "document_representations", "document_shipments", "document_containers", "document_texts",
	"custom_fields", "tracking_requests", "vessels", "raw_events", "transport_events"}

func openSeedDB(t *testing.T) *db.DB { return pg.New(t, 0).Store }

func mustSeed(t *testing.T, d *db.DB, o seed.Options) ([]seed.Token, seed.Stats) {
	t.Helper()
	if o.Now.IsZero() {
		o.Now = seedNow
	}
	tokens, stats, err := seed.Run(context.Background(), d, o)
	if err != nil {
		t.Fatalf("Seed: %v", err)
	}
	return tokens, stats
}

func queryInt(t *testing.T, q *sql.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := q.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%v\n%s", err, query)
	}
	return n
}

func queryStrings(t *testing.T, q *sql.DB, query string, args ...any) []string {
	t.Helper()
	return pg.Column[string](t, q, query, args...)
}

// digest is a hash of every row of every seeded table: equal digests mean
// equal data, ids and values alike.
func digest(t *testing.T, q *sql.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, table := range seedTables {
		var h sql.NullString
		if err := q.QueryRow(`SELECT md5(string_agg(x::text, '|' ORDER BY x::text)) FROM ` + table + ` x`).Scan(&h); err != nil {
			t.Fatal(err)
		}
		out[table] = h.String
	}
	return out
}

// schemaShape lists the indexes and constraints of the seeded tables, with
// the constraints' comments (00012's relationship names), to check that a
// seed leaves them exactly as the migrations made them.
func schemaShape(t *testing.T, q *sql.DB) []string {
	t.Helper()
	idx := queryStrings(t, q, `SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`)
	con := queryStrings(t, q, `SELECT conname || ' ' || pg_get_constraintdef(oid) || coalesce(' -- ' || obj_description(oid, 'pg_constraint'), '') FROM pg_constraint
		WHERE connamespace = 'public'::regnamespace ORDER BY conname`)
	return append(idx, con...)
}

// iso6346Valid checks a container number's check digit (written here
// independently of the seed's code).
func iso6346Valid(n string) bool {
	if !regexp.MustCompile(`^[A-Z]{3}[UJZ][0-9]{7}$`).MatchString(n) {
		return false
	}
	const letters = "A.BCDEFGHIJK.LMNOPQRSTU.VWXYZ" // position+10 is the value; dots are multiples of 11
	sum := 0
	for i := 0; i < 10; i++ {
		v := int(n[i] - '0')
		if n[i] >= 'A' {
			v = bytes.IndexByte([]byte(letters), n[i]) + 10
		}
		sum += v << i
	}
	return sum%11%10 == int(n[10]-'0')
}

func TestISO6346Reference(t *testing.T) {
	// The standard's own example and a carrier's real box.
	for _, n := range []string{"CSQU3054383", "MSKU9070323"} {
		if !iso6346Valid(n) {
			t.Errorf("%s: reference number not valid for the test's own check", n)
		}
	}
	if iso6346Valid("CSQU3054384") {
		t.Error("wrong check digit accepted")
	}
}

func TestSeedDataSet(t *testing.T) {
	d := openSeedDB(t)
	q := d.SQL()
	before := schemaShape(t, q)

	var n atomic.Int64
	ctx := db.WithQueryCounter(context.Background(), &n)
	tokens, stats, err := seed.Run(ctx, d, seed.Options{Shipments: 60, Seed: 1, Now: seedNow})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("schema restored", func(t *testing.T) {
		if after := schemaShape(t, q); !slices.Equal(before, after) {
			t.Errorf("indexes or constraints differ after the seed:\nbefore %q\nafter  %q", before, after)
		}
	})

	t.Run("rows and statements", func(t *testing.T) {
		var total int64
		for _, table := range seedTables {
			total += queryInt(t, q, `SELECT count(*) FROM `+table)
		}
		if stats.Rows != total {
			t.Errorf("stats.Rows = %d, tables hold %d", stats.Rows, total)
		}
		if got := queryInt(t, q, `SELECT count(*) FROM shipments`); got != 60 {
			t.Errorf("%d shipments, want 60", got)
		}
		// One tracking request per shipment, in its state (issue 27).
		if got := queryInt(t, q, `SELECT count(*) FROM shipments s JOIN tracking_requests r ON r.account_id = s.account_id
			AND r.shipment_id = s.id AND r.status = CASE WHEN s.line_tracking_stopped_at IS NULL THEN 'created' ELSE 'tracking_stopped' END`); got != 60 {
			t.Errorf("%d shipments with their tracking request, want 60", got)
		}
		// One statement per COPY and per DDL, never per row: a fixed
		// ~95 (index rebuilds, small tables; migration 00022's six search
		// indexes brought it from 146 to 152 here) plus 8 per chunk.
		if got := n.Load(); got == 0 || got > 175 || got*4 > stats.Rows {
			t.Errorf("%d statements counted for %d rows", got, stats.Rows)
		}
		if stats.Duration <= 0 {
			t.Error("no duration")
		}
	})

	t.Run("journeys", func(t *testing.T) {
		// Every container of a demo seed has a journey; its transport
		// events mirror its raw events, at the shipment's ports, in the
		// account of the container.
		if got := queryInt(t, q, `SELECT count(*) FROM containers c WHERE NOT EXISTS
			(SELECT 1 FROM transport_events te WHERE te.account_id = c.account_id AND te.container_id = c.id)`); got != 0 {
			t.Errorf("%d containers without transport events", got)
		}
		if r, te := queryInt(t, q, `SELECT count(*) FROM raw_events`), queryInt(t, q, `SELECT count(*) FROM transport_events`); r != te || r < 3*queryInt(t, q, `SELECT count(*) FROM containers`) {
			t.Errorf("%d raw events, %d transport events", r, te)
		}
		for name, query := range map[string]string{
			"transport event without its raw event": `SELECT count(*) FROM transport_events te LEFT JOIN raw_events re
				ON re.account_id = te.account_id AND re.id = te.raw_event_id WHERE re.id IS NULL OR re.container_id <> te.container_id`,
			"event elsewhere than the shipment's ports": `SELECT count(*) FROM transport_events te JOIN shipments s ON s.account_id = te.account_id AND s.id = te.shipment_id
				WHERE te.port_id NOT IN (s.port_of_lading_id, s.port_of_discharge_id)`,
			"event without a shipment of its account": `SELECT count(*) FROM transport_events te WHERE te.shipment_id IS NOT NULL AND NOT EXISTS
				(SELECT 1 FROM shipments s WHERE s.account_id = te.account_id AND s.id = te.shipment_id)`,
			"actual event in the future":    `SELECT count(*) FROM transport_events WHERE event NOT LIKE 'container.transport.estimated.%' AND event_at > $1`,
			"vessel event without a vessel": `SELECT count(*) FROM transport_events WHERE event ~ 'vessel_(loaded|departed|arrived|discharged)$' AND vessel_id IS NULL`,
			"vessel position half known": `SELECT count(*) FROM vessels WHERE (latitude IS NULL) <> (longitude IS NULL)
				OR latitude NOT BETWEEN -90 AND 90 OR longitude NOT BETWEEN -180 AND 180`,
		} {
			var args []any
			if strings.Contains(query, "$1") {
				args = append(args, seedNow)
			}
			if got := queryInt(t, q, query, args...); got != 0 {
				t.Errorf("%s: %d rows", name, got)
			}
		}
		for _, imo := range queryStrings(t, q, `SELECT imo FROM vessels`) {
			if !numbers.ValidIMO(imo) {
				t.Errorf("vessel IMO %s has a wrong check digit", imo)
			}
		}
		if got := queryInt(t, q, `SELECT count(*) FROM vessels WHERE latitude IS NOT NULL`); got == 0 {
			t.Error("no vessel at sea")
		}
	})

	t.Run("accounts and tokens", func(t *testing.T) {
		accounts := queryStrings(t, q, `SELECT slug FROM accounts ORDER BY slug`)
		if len(accounts) < 2 || !slices.Contains(accounts, "acme") || !slices.Contains(accounts, "globex") {
			t.Fatalf("accounts %v", accounts)
		}
		if len(tokens) != 3*len(accounts) {
			t.Fatalf("%d tokens for %d accounts", len(tokens), len(accounts))
		}
		keyRE := regexp.MustCompile(`^sg_[0-9a-f]{40}$`)
		for i, tok := range tokens {
			wantRole := []string{"admin", "member", "viewer"}[i%3]
			if tok.Account != accounts[i/3] || tok.Role != wantRole {
				t.Errorf("token %d is %s/%s, want %s/%s (sorted by account, then role)", i, tok.Account, tok.Role, accounts[i/3], wantRole)
			}
			if !keyRE.MatchString(tok.Key) {
				t.Errorf("key %q has the wrong format", tok.Key)
			}
			sum := sha256.Sum256([]byte(tok.Key))
			var slug, role, prefix, email string
			err := q.QueryRow(`SELECT a.slug, t.role, t.prefix, u.email FROM api_tokens t
				JOIN accounts a ON a.id = t.account_id JOIN users u ON u.account_id = t.account_id AND u.id = t.user_id
				WHERE t.token_sha256 = $1`, sum[:]).Scan(&slug, &role, &prefix, &email)
			if err != nil {
				t.Fatalf("token %s/%s not stored by its hash: %v", tok.Account, tok.Role, err)
			}
			if slug != tok.Account || role != tok.Role || prefix != tok.Key[:10] || email != tok.Role+"@"+tok.Account+".example" {
				t.Errorf("stored token %s %s %s %s does not match %+v", slug, role, prefix, email, tok)
			}
		}
		if got := queryInt(t, q, `SELECT count(*) FROM users u JOIN accounts a ON a.id = u.account_id
			WHERE u.email = u.role || '@' || a.slug || '.example'`); got != int64(3*len(accounts)) {
			t.Errorf("%d users with role emails, want %d", got, 3*len(accounts))
		}
		acme := queryInt(t, q, `SELECT count(*) FROM shipments s JOIN accounts a ON a.id = s.account_id WHERE a.slug = 'acme'`)
		if acme < 30 || acme > 55 {
			t.Errorf("acme has %d of 60 shipments, want about two thirds", acme)
		}
	})

	t.Run("every enum value", func(t *testing.T) {
		for _, c := range []struct {
			query string
			want  []string
		}{
			{`SELECT DISTINCT current_status FROM containers`, model.ContainerStatuses.Values()},
			{`SELECT DISTINCT source FROM documents`, model.DocumentSources.Values()},
			{`SELECT DISTINCT line_tracking_stopped_reason FROM shipments WHERE line_tracking_stopped_reason IS NOT NULL`, model.StoppedReasons.Values()},
			{`SELECT DISTINCT data_type FROM custom_field_definitions d JOIN accounts a ON a.id = d.account_id
				WHERE a.slug = 'globex' AND entity_type = 'Shipment'`, model.DataTypes.Values()},
		} {
			got := queryStrings(t, q, c.query)
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("%s: %q missing (got %v)", c.query, w, got)
				}
			}
		}
		if got := queryInt(t, q, `SELECT count(DISTINCT account_id) FROM custom_field_definitions WHERE entity_type = 'Container'`); got < 2 {
			t.Errorf("container custom fields defined for %d accounts", got)
		}
		if got := queryInt(t, q, `SELECT count(*) FROM custom_field_definitions d WHERE data_type IN ('enum', 'enum_multi')
			AND (SELECT count(*) FROM custom_field_options o WHERE o.account_id = d.account_id AND o.definition_id = d.id) NOT BETWEEN 3 AND 6`); got != 0 {
			t.Errorf("%d enum definitions without 3 to 6 options", got)
		}
		if got := queryInt(t, q, `SELECT count(*) FROM custom_field_options WHERE position IS NULL OR label = ''`); got != 0 {
			t.Errorf("%d options without position or label", got)
		}
		if got := queryInt(t, q, `SELECT count(*) FROM shipments WHERE line_tracking_stopped_by_user_id IS NOT NULL`); got == 0 {
			t.Error("no shipment stopped by a user")
		}
	})

	t.Run("container numbers", func(t *testing.T) {
		numbers := queryStrings(t, q, `SELECT number FROM containers`)
		for _, num := range numbers {
			if !iso6346Valid(num) {
				t.Errorf("container number %s: bad format or check digit", num)
			}
		}
		if len(numbers) < 60 || len(numbers) > 360 {
			t.Errorf("%d containers for 60 shipments", len(numbers))
		}
		if got := queryInt(t, q, `SELECT count(*) FROM (SELECT shipment_id FROM containers GROUP BY 1
			HAVING count(*) NOT BETWEEN 1 AND 6 OR count(DISTINCT number) <> count(*)) x`); got != 0 {
			t.Errorf("%d shipments with a wrong number of containers or duplicate numbers", got)
		}
	})

	// Each query counts rows that break a rule of a realistic data set.
	rules := map[string]string{
		"line columns match the line": `SELECT count(*) FROM shipments s JOIN shipping_lines l ON l.id = s.shipping_line_id
			WHERE (l.scac, l.name, l.short_name) IS DISTINCT FROM (s.shipping_line_scac, s.shipping_line_name, s.shipping_line_short_name)
			   OR s.bill_of_lading_number NOT LIKE l.bill_of_lading_prefix || '%'
			   OR s.bill_of_lading_number <> l.bill_of_lading_prefix || s.normalized_number`,
		"every shipment has a line": `SELECT count(*) FROM shipments WHERE shipping_line_id IS NULL`,
		"port columns match the ports": `SELECT count(*) FROM shipments s
			JOIN ports pol ON pol.id = s.port_of_lading_id JOIN ports pod ON pod.id = s.port_of_discharge_id
			WHERE (pol.code, pol.name, pol.time_zone) IS DISTINCT FROM (s.port_of_lading_locode, s.port_of_lading_name, s.pol_timezone)
			   OR (pod.code, pod.name, pod.time_zone) IS DISTINCT FROM (s.port_of_discharge_locode, s.port_of_discharge_name, s.pod_timezone)
			   OR pol.country_code = 'US' OR pod.country_code <> 'US'`,
		"pod terminal at the pod": `SELECT count(*) FROM shipments s JOIN terminals t ON t.id = s.pod_terminal_id
			WHERE t.port_id IS DISTINCT FROM s.port_of_discharge_id`,
		"destination columns match": `SELECT count(*) FROM shipments s
			LEFT JOIN ports p ON p.id = s.destination_port_id LEFT JOIN metro_areas m ON m.id = s.destination_metro_area_id
			LEFT JOIN rail_terminals r ON r.id = s.destination_rail_terminal_id
			WHERE (s.destination_locode, s.destination_name, s.destination_timezone) IS DISTINCT FROM
			      (coalesce(p.code, m.code), coalesce(p.name, m.name), coalesce(p.time_zone, m.time_zone))
			   OR (s.destination_rail_terminal_id IS NOT NULL AND r.metro_area_id IS DISTINCT FROM s.destination_metro_area_id)
			   OR (s.destination_terminal_id IS NOT NULL AND s.destination_port_id IS NULL)`,
		"times in order": `SELECT count(*) FROM shipments WHERE created_at > $1 OR pol_atd_at < pol_etd_at
			OR pod_ata_at > $1 OR pol_atd_at > $1 OR pod_ata_at < pol_atd_at
			OR line_tracking_last_succeeded_at > line_tracking_last_attempted_at
			OR line_tracking_stopped_at > $1 OR line_tracking_stopped_at < created_at
			OR pod_eta_at NOT BETWEEN $1::timestamptz - interval '31 days' AND $1::timestamptz + interval '31 days'`,
		"stop reason with a time": `SELECT count(*) FROM shipments WHERE (line_tracking_stopped_at IS NULL) <> (line_tracking_stopped_reason IS NULL)`,
		"vessel imo":              `SELECT count(*) FROM shipments WHERE pod_vessel_imo !~ '^9[0-9]{6}$' OR pod_vessel_name IS NULL OR pod_voyage_number IS NULL`,
		"containers follow their shipment": `SELECT count(*) FROM containers c LEFT JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id
			WHERE s.id IS NULL OR c.pod_terminal_id IS DISTINCT FROM s.pod_terminal_id
			   OR c.pod_timezone IS DISTINCT FROM s.pod_timezone OR c.pod_arrived_at IS DISTINCT FROM s.pod_ata_at`,
		"before arrival nothing at the port": `SELECT count(*) FROM containers WHERE current_status IN ('new', 'on_ship')
			AND (pod_arrived_at IS NOT NULL OR pod_discharged_at IS NOT NULL OR pod_full_out_at IS NOT NULL OR empty_terminated_at IS NOT NULL)`,
		"available means available": `SELECT count(*) FROM containers WHERE current_status = 'available'
			AND (available_for_pickup IS NOT TRUE OR NOT availability_known OR pod_discharged_at IS NULL
			     OR pickup_lfd NOT BETWEEN $1::timestamptz - interval '7 days' AND $1::timestamptz + interval '7 days')`,
		"picked up means full out":   `SELECT count(*) FROM containers WHERE current_status = 'picked_up' AND pod_full_out_at IS NULL`,
		"empty returned means empty": `SELECT count(*) FROM containers WHERE (current_status = 'empty_returned') <> (empty_terminated_at IS NOT NULL)`,
		"rail statuses are inland": `SELECT count(*) FROM containers c JOIN shipments s ON s.account_id = c.account_id AND s.id = c.shipment_id
			WHERE c.current_status IN ('on_rail', 'grounded', 'awaiting_inland_transfer') AND s.destination_rail_terminal_id IS NULL`,
		"milestones in order": `SELECT count(*) FROM containers WHERE pod_discharged_at < pod_arrived_at OR pod_full_out_at < pod_discharged_at
			OR pod_rail_loaded_at < pod_discharged_at OR ind_ata_at < pod_rail_departed_at OR final_destination_full_out_at < ind_rail_unloaded_at
			OR empty_terminated_at < coalesce(pod_full_out_at, final_destination_full_out_at)
			OR greatest(pod_discharged_at, pod_full_out_at, empty_terminated_at, ind_ata_at, final_destination_full_out_at) > $1`,
		"equipment": `SELECT count(*) FROM containers WHERE (equipment_length = 45 AND equipment_height <> 'high_cube')
			OR (equipment_type IN ('tank', 'bulk') AND equipment_length <> 20) OR weight_in_lbs > 67200`,
		"holds and fees": `SELECT count(*) FROM containers c WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(c.holds_at_pod_terminal) h
			WHERE h->>'status' NOT IN ('pending', 'hold') OR h->>'name' IS NULL)
			OR EXISTS (SELECT 1 FROM jsonb_array_elements(c.fees_at_pod_terminal) f
			WHERE f->>'type' NOT IN ('demurrage', 'exam', 'extended_dwell_time', 'other', 'total') OR f->>'currency_code' <> 'USD')`,
		"documents link their own account": `SELECT count(*) FROM documents d WHERE
			(SELECT count(*) FROM document_shipments ds JOIN shipments s ON s.account_id = ds.account_id AND s.id = ds.shipment_id
			 WHERE ds.account_id = d.account_id AND ds.document_id = d.id) NOT BETWEEN 1 AND 2
			OR EXISTS (SELECT 1 FROM document_containers dc LEFT JOIN containers c ON c.account_id = dc.account_id AND c.id = dc.container_id
			 WHERE dc.account_id = d.account_id AND dc.document_id = d.id AND (c.id IS NULL OR NOT EXISTS (
			   SELECT 1 FROM document_shipments ds WHERE ds.account_id = d.account_id AND ds.document_id = d.id AND ds.shipment_id = c.shipment_id)))`,
		"document links in their document's account": `SELECT count(*) FROM document_shipments ds WHERE NOT EXISTS
			(SELECT 1 FROM documents d WHERE d.account_id = ds.account_id AND d.id = ds.document_id)`,
		"documents by source": `SELECT count(*) FROM documents WHERE (source = 'email') <> (email_submission_id IS NOT NULL)
			OR (source = 'upload' AND user_id IS NULL) OR (source = 'api' AND user_id IS NOT NULL)
			OR file_name !~ '^[A-Z]+_[A-Z]{4}[0-9]+(_p[0-9]+-[0-9]+)?\.(pdf|xlsx|jpg|png)$' OR file_size_bytes <= 0`,
		"latest representation": `SELECT count(*) FROM documents d WHERE d.last_document_representation_id IS DISTINCT FROM
			(SELECT r.id FROM document_representations r WHERE r.account_id = d.account_id AND r.document_id = d.id ORDER BY r.created_at DESC, r.schema_version DESC LIMIT 1)`,
		"one document per two shipments":  `SELECT count(*) FROM (SELECT count(*) AS n FROM documents) x WHERE n NOT BETWEEN 15 AND 45`,
		"custom fields on most shipments": `SELECT count(*) FROM (SELECT count(DISTINCT shipment_id) AS n FROM custom_fields) x WHERE n NOT BETWEEN 40 AND 58`,
		"custom fields own account": `SELECT count(*) FROM custom_fields f LEFT JOIN custom_field_definitions d ON d.account_id = f.account_id AND d.id = f.definition_id
			LEFT JOIN shipments s ON s.account_id = f.account_id AND s.id = f.shipment_id
			LEFT JOIN containers c ON c.account_id = f.account_id AND c.id = f.container_id
			WHERE d.id IS NULL OR coalesce(s.id, c.id) IS NULL
			   OR (f.shipment_id IS NOT NULL) <> (d.entity_type = 'Shipment')`,
	}
	for name, query := range rules {
		t.Run(name, func(t *testing.T) {
			var args []any
			if bytes.Contains([]byte(query), []byte("$1")) {
				args = append(args, seedNow)
			}
			if got := queryInt(t, q, query, args...); got != 0 {
				t.Errorf("%d rows break the rule", got)
			}
		})
	}

	t.Run("custom field values fit their type", func(t *testing.T) {
		rows, err := q.Query(`SELECT d.api_slug, d.data_type, f.value,
			coalesce((SELECT array_agg(o.value) FROM custom_field_options o WHERE o.account_id = d.account_id AND o.definition_id = d.id), '{}')
			FROM custom_fields f JOIN custom_field_definitions d ON d.account_id = f.account_id AND d.id = f.definition_id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		types := map[string]bool{}
		for rows.Next() {
			var slug, dataType string
			var value []byte
			var options pq.StringArray
			if err := rows.Scan(&slug, &dataType, &value, &options); err != nil {
				t.Fatal(err)
			}
			def := &model.CustomFieldDefinition{APISlug: slug, DataType: model.CustomFieldDataType(dataType)}
			var opts []*model.CustomFieldOption
			for _, o := range options {
				opts = append(opts, &model.CustomFieldOption{Value: o})
			}
			norm, err := model.NormalizeCustomFieldValue(def, opts, model.JSON(value))
			if err != nil {
				t.Errorf("%s (%s) = %s: %v", slug, dataType, value, err)
				continue
			}
			var a, b any
			_ = json.Unmarshal(value, &a)
			_ = json.Unmarshal(norm, &b)
			if !jsonEqual(a, b) {
				t.Errorf("%s (%s) = %s, normalized %s", slug, dataType, value, norm)
			}
			types[dataType] = true
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		for _, dt := range model.DataTypes.Values() {
			if !types[dt] {
				t.Errorf("no value of type %s", dt)
			}
		}
	})
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestSeedDeterministic(t *testing.T) {
	t.Parallel()
	d1, d2, d3 := openSeedDB(t), openSeedDB(t), openSeedDB(t)
	tok1, _ := mustSeed(t, d1, seed.Options{Shipments: 40, Seed: 42})
	tok2, _ := mustSeed(t, d2, seed.Options{Shipments: 40, Seed: 42})
	tok3, _ := mustSeed(t, d3, seed.Options{Shipments: 40, Seed: 43})

	if !slices.Equal(tok1, tok2) {
		t.Errorf("same seed, different keys:\n%v\n%v", tok1, tok2)
	}
	h1, h2, h3 := digest(t, d1.SQL()), digest(t, d2.SQL()), digest(t, d3.SQL())
	for _, table := range seedTables {
		if h1[table] != h2[table] {
			t.Errorf("%s: same seed, different rows", table)
		}
		if h1[table] == h3[table] {
			t.Errorf("%s: different seeds, same rows", table)
		}
	}
	for i := range tok1 {
		if tok1[i].Key == tok3[i].Key {
			t.Errorf("different seeds, same key for %s/%s", tok1[i].Account, tok1[i].Role)
		}
	}
	ids1 := queryStrings(t, d1.SQL(), `SELECT id::text FROM shipments ORDER BY id`)
	ids3 := queryStrings(t, d3.SQL(), `SELECT id::text FROM shipments ORDER BY id`)
	for _, id := range ids1 {
		if slices.Contains(ids3, id) {
			t.Errorf("shipment id %s in both seeds", id)
		}
	}
	// Keys don't depend on the size of the data set.
	d4 := openSeedDB(t)
	if tok4, _ := mustSeed(t, d4, seed.Options{Shipments: 5, Seed: 42}); !slices.Equal(tok1, tok4) {
		t.Errorf("keys changed with the number of shipments")
	}
}

func TestSeedNotEmptyAndForce(t *testing.T) {
	t.Parallel()
	d := openSeedDB(t)
	q := d.SQL()
	first, _ := mustSeed(t, d, seed.Options{Shipments: 30, Seed: 7})
	before := digest(t, q)

	_, _, err := seed.Run(context.Background(), d, seed.Options{Shipments: 10, Seed: 8, Now: seedNow})
	if !errors.Is(err, seed.ErrNotEmpty) {
		t.Fatalf("second seed without Force: err = %v, want ErrNotEmpty", err)
	}
	if after := digest(t, q); !mapsEqual(before, after) {
		t.Error("a refused seed changed the data")
	}

	// Force replaces everything; Shipments 0 means the default, 200.
	second, _ := mustSeed(t, d, seed.Options{Seed: 8, Force: true})
	if got := queryInt(t, q, `SELECT count(*) FROM shipments`); got != 200 {
		t.Errorf("%d shipments after a forced default seed, want 200", got)
	}
	if got := queryInt(t, q, `SELECT count(*) FROM accounts`); got != 2 {
		t.Errorf("%d accounts after a forced seed, want 2", got)
	}
	for _, tok := range first {
		sum := sha256.Sum256([]byte(tok.Key))
		if queryInt(t, q, `SELECT count(*) FROM api_tokens WHERE token_sha256 = $1`, sum[:]) != 0 {
			t.Errorf("old key %s/%s survived a forced seed", tok.Account, tok.Role)
		}
	}
	for _, tok := range second {
		sum := sha256.Sum256([]byte(tok.Key))
		if queryInt(t, q, `SELECT count(*) FROM api_tokens WHERE token_sha256 = $1`, sum[:]) != 1 {
			t.Errorf("new key %s/%s not stored", tok.Account, tok.Role)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// cancelOnProgress cancels a context when the progress bar first shows
// shipments done: the first chunk has been copied, the rest is to come.
type cancelOnProgress struct{ cancel context.CancelFunc }

func (w cancelOnProgress) Write(p []byte) (int, error) {
	if regexp.MustCompile(`\([1-9][0-9]*/`).Match(p) {
		w.cancel()
	}
	return len(p), nil
}

func TestSeedCancelledLeavesNothing(t *testing.T) {
	t.Parallel()
	d := openSeedDB(t)
	q := d.SQL()
	shape := schemaShape(t, q)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, _, err := seed.Run(ctx, d, seed.Options{Shipments: 12000, Seed: 1, Now: seedNow, Progress: cancelOnProgress{cancel}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Seed with a cancelled context: err = %v, want context.Canceled", err)
	}
	for _, table := range seedTables {
		if n := queryInt(t, q, `SELECT count(*) FROM `+table); n != 0 {
			t.Errorf("%s has %d rows after a cancelled seed", table, n)
		}
	}
	if after := schemaShape(t, q); !slices.Equal(shape, after) {
		t.Error("indexes or constraints changed by a cancelled seed")
	}
	// And the database is still usable for a seed.
	mustSeed(t, d, seed.Options{Shipments: 5, Seed: 1})
}
