package db_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"
	"shipgraph/db"
	"shipgraph/db/dbtest"
	"shipgraph/db/seed"
	"shipgraph/model"
	"shipgraph/testkit"
	"shipgraph/testkit/pg"
)

// seededMigrations is a database of the test's own seeded with shipments
// shipments from seedN, a store on it, and a goose provider over the
// embedded migrations, for tests that take the schema down and up again.
func seededMigrations(t *testing.T, shipments int, seedN int64) (*db.DB, *goose.Provider) {
	t.Helper()
	ctx := context.Background()
	store := pg.At(t, dbtest.NewDB(t)).Store
	if _, _, err := seed.Run(ctx, store, seed.Options{Shipments: shipments, Seed: seedN, Now: testkit.SeedNow}); err != nil {
		t.Fatal(err)
	}
	fsys, err := fs.Sub(db.Migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, store.SQL(), fsys, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	return store, p
}

// Migration 00023 merges the doubled shipments and containers that racing
// polls left, within each account, onto the oldest copy: what pointed at a
// younger copy points at the keeper, an event both copies hold is kept
// once, and the unique indexes then refuse any new double.
func TestMergeDoublesMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, p := seededMigrations(t, 20, 3)
	q := store.SQL()
	if _, err := p.DownTo(ctx, 22); err != nil {
		t.Fatalf("down: %v", err)
	}
	one := func(query string, args ...any) string {
		t.Helper()
		var s string
		if err := q.QueryRowContext(ctx, query, args...).Scan(&s); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return s
	}
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := q.ExecContext(ctx, query, args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	ship := one(`SELECT s.id FROM shipments s WHERE EXISTS (SELECT 1 FROM containers c WHERE c.account_id = s.account_id AND c.shipment_id = s.id)
		ORDER BY s.id LIMIT 1`)
	acct := one(`SELECT account_id FROM shipments WHERE id = $1`, ship)
	box := one(`SELECT id FROM containers WHERE shipment_id = $1 ORDER BY id LIMIT 1`, ship)
	number := one(`SELECT number FROM containers WHERE id = $1`, box)
	// A younger copy of the shipment (its number in another case), with a
	// copy of the container and one of its own.
	dup := one(`INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number, shipping_line_scac, shipping_line_name,
			shipping_line_short_name, tags, ref_numbers, created_at)
		SELECT account_id, bill_of_lading_number, lower(normalized_number), shipping_line_scac, shipping_line_name,
			shipping_line_short_name, ARRAY['from-double'], ARRAY['PO-DOUBLE'], created_at + interval '1 second'
		FROM shipments WHERE id = $1 RETURNING id`, ship)
	box2 := one(`INSERT INTO containers (account_id, shipment_id, number, created_at) VALUES ($1, $2, $3, now()) RETURNING id`, acct, dup, number)
	extra := one(`INSERT INTO containers (account_id, shipment_id, number, created_at) VALUES ($1, $2, 'ZZZU0000001', now()) RETURNING id`, acct, dup)
	// A second copy of the container within the shipment itself.
	box3 := one(`INSERT INTO containers (account_id, shipment_id, number, created_at) VALUES ($1, $2, $3, now() + interval '1 second')
		RETURNING id`, acct, ship, number)
	event := func(container, shipment, id string) {
		t.Helper()
		raw := one(`INSERT INTO raw_events (account_id, container_id, shipment_id, scac, carrier_event_id, event)
			VALUES ($1, $2, $3, 'MRGE', $4, 'test') RETURNING id`, acct, container, shipment, id)
		exec(`INSERT INTO transport_events (account_id, container_id, shipment_id, raw_event_id, scac, carrier_event_id, event)
			VALUES ($1, $2, $3, $4, 'MRGE', $5, 'container.transport.vessel_departed')`, acct, container, shipment, raw, id)
	}
	event(box, ship, "e1")
	event(box2, dup, "e1")
	event(box2, dup, "e2")
	event(box3, ship, "e2")
	event(box3, ship, "e3")
	event(extra, dup, "e4")
	req := one(`INSERT INTO tracking_requests (account_id, request_type, request_number, scac, status, shipment_id)
		SELECT account_id, 'container', 'ZZZU0000001', shipping_line_scac, 'created', $2 FROM shipments WHERE id = $1 RETURNING id`, ship, dup)
	doc := one(`SELECT id FROM documents WHERE account_id = $1 ORDER BY id LIMIT 1`, acct)
	exec(`INSERT INTO document_shipments (account_id, document_id, shipment_id) VALUES ($1, $2, $3), ($1, $2, $4) ON CONFLICT DO NOTHING`,
		acct, doc, ship, dup)
	exec(`INSERT INTO document_containers (account_id, document_id, container_id) VALUES ($1, $2, $3)`, acct, doc, box2)
	def := one(`INSERT INTO custom_field_definitions (account_id, entity_type, api_slug, display_name, data_type)
		VALUES ($1, 'Shipment', 'merge_note', 'Merge note', 'short_text') RETURNING id`, acct)
	exec(`INSERT INTO custom_fields (account_id, definition_id, shipment_id, value) VALUES ($1, $2, $3, '"kept"')`, acct, def, dup)

	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	// The checks name the fixture's ids, quoted (uuids and test numbers).
	args := strings.NewReplacer(":acct", "'"+acct+"'", ":ship", "'"+ship+"'", ":dup", "'"+dup+"'", ":number", "'"+number+"'",
		":box2", "'"+box2+"'", ":box", "'"+box+"'", ":extra", "'"+extra+"'", ":req", "'"+req+"'", ":doc", "'"+doc+"'", ":def", "'"+def+"'")
	for what, c := range map[string]struct {
		query string
		want  string
	}{
		"copies of the shipment":          {`SELECT count(*) FROM shipments WHERE account_id = :acct AND id IN (:ship, :dup)`, "1"},
		"the keeper":                      {`SELECT count(*) FROM shipments WHERE id = :ship`, "1"},
		"the keeper's tags":               {`SELECT 'from-double' = ANY (tags) AND 'PO-DOUBLE' = ANY (ref_numbers) FROM shipments WHERE id = :ship`, "true"},
		"copies of the container":         {`SELECT count(*) FROM containers WHERE account_id = :acct AND shipment_id = :ship AND number = :number`, "1"},
		"the container kept":              {`SELECT count(*) FROM containers WHERE id = :box`, "1"},
		"the younger copy's own box":      {`SELECT shipment_id::text = :ship FROM containers WHERE id = :extra`, "true"},
		"raw events of the container":     {`SELECT string_agg(carrier_event_id, ',' ORDER BY carrier_event_id) FROM raw_events WHERE container_id = :box AND shipment_id = :ship AND scac = 'MRGE'`, "e1,e2,e3"},
		"transport events of it":          {`SELECT string_agg(carrier_event_id, ',' ORDER BY carrier_event_id) FROM transport_events WHERE container_id = :box AND shipment_id = :ship AND scac = 'MRGE'`, "e1,e2,e3"},
		"events of the moved box":         {`SELECT count(*) FROM raw_events WHERE container_id = :extra AND shipment_id = :ship`, "1"},
		"the request":                     {`SELECT shipment_id::text = :ship FROM tracking_requests WHERE id = :req`, "true"},
		"the document's shipment links":   {`SELECT count(*) FROM document_shipments WHERE document_id = :doc AND shipment_id IN (:ship, :dup)`, "1"},
		"the document's container links":  {`SELECT string_agg(container_id::text, ',') = :box::text FROM document_containers WHERE document_id = :doc AND container_id IN (:box, :box2)`, "true"},
		"the custom field value":          {`SELECT value #>> '{}' FROM custom_fields WHERE definition_id = :def AND shipment_id = :ship`, "kept"},
		"doubles anywhere (shipments)":    {`SELECT count(*) FROM (SELECT 1 FROM shipments GROUP BY account_id, shipping_line_scac, upper(normalized_number) HAVING count(*) > 1) d`, "0"},
		"doubles anywhere (containers)":   {`SELECT count(*) FROM (SELECT 1 FROM containers GROUP BY account_id, shipment_id, number HAVING count(*) > 1) d`, "0"},
		"events on another shipment":      {`SELECT count(*) FROM raw_events r JOIN containers c ON c.account_id = r.account_id AND c.id = r.container_id WHERE c.shipment_id <> r.shipment_id`, "0"},
		"transport events elsewhere":      {`SELECT count(*) FROM transport_events e JOIN raw_events r ON r.account_id = e.account_id AND r.id = e.raw_event_id WHERE r.container_id <> e.container_id`, "0"},
		"transport events without source": {`SELECT count(*) FROM transport_events WHERE scac = 'MRGE' AND raw_event_id IS NULL`, "0"},
	} {
		var got string
		if err := q.QueryRowContext(ctx, `SELECT coalesce((`+args.Replace(c.query)+`)::text, '')`).Scan(&got); err != nil {
			t.Errorf("%s: %v", what, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: %s, want %s", what, got, c.want)
		}
	}
	// The database refuses a new double.
	if _, err := q.ExecContext(ctx, `INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number, shipping_line_scac,
			shipping_line_name, shipping_line_short_name)
		SELECT account_id, bill_of_lading_number, lower(normalized_number), shipping_line_scac, shipping_line_name, shipping_line_short_name
		FROM shipments WHERE id = $1`, ship); err == nil {
		t.Error("a second shipment of the number was stored")
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO containers (account_id, shipment_id, number) VALUES ($1, $2, $3)`, acct, ship, number); err == nil {
		t.Error("a second container of the number was stored")
	}
}

// Migration 00013 backfills one tracking request per existing shipment
// under the id webhook payloads already gave it (model.TrackingRequestID),
// created or tracking_stopped as its shipment, and its down migration
// leaves every other row in place.
func TestTrackingMigrationBackfill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, p := seededMigrations(t, 60, 3)
	q := store.SQL()
	if _, err := q.ExecContext(ctx, `UPDATE shipments SET line_tracking_stopped_at = now(), line_tracking_stopped_reason = 'cancelled_by_user'
		WHERE id = (SELECT id FROM shipments ORDER BY id LIMIT 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DownTo(ctx, 12); err != nil {
		t.Fatalf("down: %v", err)
	}
	var logged int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM change_log`).Scan(&logged); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	var after int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM change_log`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != logged {
		t.Errorf("the backfill logged %d changes, want none", after-logged)
	}
	rows, err := q.QueryContext(ctx, `SELECT s.id, s.account_id, coalesce(t.id::text, ''), coalesce(t.status, ''),
			coalesce(t.request_number, ''), s.bill_of_lading_number, s.line_tracking_stopped_at IS NOT NULL
		FROM shipments s LEFT JOIN tracking_requests t ON t.account_id = s.account_id AND t.shipment_id = s.id
		ORDER BY s.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n, stopped := 0, 0
	for rows.Next() {
		var id, acct, tr, status, number, bol string
		var isStopped bool
		if err := rows.Scan(&id, &acct, &tr, &status, &number, &bol, &isStopped); err != nil {
			t.Fatal(err)
		}
		n++
		if want := model.TrackingRequestID(id); tr != want {
			t.Errorf("shipment %s: tracking request %q, want %q", id, tr, want)
		}
		want := "created"
		if isStopped {
			want = "tracking_stopped"
			stopped++
		}
		if status != want {
			t.Errorf("shipment %s: status %q, want %q", id, status, want)
		}
		if number == "" {
			t.Errorf("shipment %s (%s): empty request number", id, bol)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 60 || stopped == 0 {
		t.Fatalf("%d shipments (%d stopped), want 60 (some stopped)", n, stopped)
	}
}
