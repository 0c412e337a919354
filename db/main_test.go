package db_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lib/pq"

	"shipgraph/db"
	"shipgraph/model"
	"shipgraph/testkit/pg"
)

func TestMain(m *testing.M) { pg.Main(m) }

// openDB returns a store on a fresh database of its own.
func openDB(t *testing.T) *db.DB { return pg.New(t, 0).Store }

// counting returns a context whose statements are counted in the result.
func counting() (context.Context, *atomic.Int64) {
	n := new(atomic.Int64)
	return db.WithQueryCounter(context.Background(), n), n
}

// base is the fixture's clock: every timestamp is base plus an offset, so
// ties (equal created_at, equal ETAs) are deliberate.
var base = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func hours(n int) time.Time { return base.Add(time.Duration(n) * time.Hour) }
func days(n int) time.Time  { return base.Add(time.Duration(n) * 24 * time.Hour) }

// tenant is one account's ids in the fixture.
type tenant struct {
	Account                 string
	Admin, Member, Viewer   string // users
	Shipments               []string
	Containers              []string
	ContainerShipment       map[string]string // container → shipment
	Documents               []string
	Email, Representation   string
	DefPriority, DefFlags   string // enum / enum_multi on Shipment
	DefNote                 string // short_text on Container
	Defs                    []string
	OptHigh, OptMed, OptLow string
	OptA, OptB, OptC        string
	ValPriority, ValFlags   string // custom field values on Shipments[0]
	ValNote                 string // on Containers[0]
}

// fixture is two accounts with overlapping numbers and names, so a query
// that forgets the account shows it, plus shared reference data.
type fixture struct {
	DB     *db.DB
	SQL    *sql.DB
	A, B   tenant
	PortLA string
	PortOK string
	Metro  string
	TermLA string
	TermOK string
	Rail   string
	LineMA string
	LineMS string
}

func (f *fixture) id(t *testing.T, q string, args ...any) string {
	t.Helper()
	var id string
	if err := f.SQL.QueryRow(q, args...).Scan(&id); err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	return id
}

func (f *fixture) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := f.SQL.Exec(q, args...); err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
}

// Shipment fixture: 12 shipments in account A (index i):
//   - created_at = hours(i/3): groups of three tie;
//   - pod_eta_at = NULL when i%4 == 0, else days(i%5): ties and NULLs;
//   - bill_of_lading_number "MAEU000<i>"-ish, i=11 repeats i=10's;
//   - normalized_number "NRM<i>"; ref_numbers {"PO-777"} on 3 and 5;
//   - tags "hot" when i%3 == 0, "cold" when i%2 == 0;
//   - scac MAEU when even, MSCU when odd; POD/terminal LA, OAK or none by i%3;
//   - tracking stopped when i%5 == 0.
const nShipmentsA = 12

func shipmentBOL(i int) string {
	if i == 11 {
		i = 10
	}
	return fmt.Sprintf("MAEU%04d", (i*7)%12)
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	d := openDB(t)
	f := &fixture{DB: d, SQL: d.SQL()}

	f.PortLA = f.id(t, `INSERT INTO ports (code, name, country_code, time_zone) VALUES ('USLAX', 'Los Angeles', 'US', 'America/Los_Angeles') RETURNING id`)
	f.PortOK = f.id(t, `INSERT INTO ports (code, name, country_code, time_zone) VALUES ('USOAK', 'Oakland', 'US', 'America/Los_Angeles') RETURNING id`)
	f.Metro = f.id(t, `INSERT INTO metro_areas (code, name, country_code, time_zone) VALUES ('USCHI', 'Chicago', 'US', 'America/Chicago') RETURNING id`)
	f.TermLA = f.id(t, `INSERT INTO terminals (port_id, name, firms_code) VALUES ($1, 'Pier 400', 'Y790') RETURNING id`, f.PortLA)
	f.TermOK = f.id(t, `INSERT INTO terminals (port_id, name, firms_code) VALUES ($1, 'Oakland Intl', 'Z985') RETURNING id`, f.PortOK)
	f.Rail = f.id(t, `INSERT INTO rail_terminals (metro_area_id, name) VALUES ($1, 'Chicago Rail') RETURNING id`, f.Metro)
	f.LineMA = f.id(t, `INSERT INTO shipping_lines (scac, name, short_name) VALUES ('MAEU', 'Maersk', 'Maersk') RETURNING id`)
	f.LineMS = f.id(t, `INSERT INTO shipping_lines (scac, name, short_name) VALUES ('MSCU', 'MSC', 'MSC') RETURNING id`)

	f.A = f.tenant(t, "acme", nShipmentsA)
	f.B = f.tenant(t, "globex", 3)
	return f
}

func (f *fixture) tenant(t *testing.T, slug string, nShipments int) tenant {
	t.Helper()
	var x tenant
	x.Account = f.id(t, `INSERT INTO accounts (slug, company_name) VALUES ($1, $1) RETURNING id`, slug)
	user := func(first, last, role string, at time.Time) string {
		return f.id(t, `INSERT INTO users (account_id, email, first_name, last_name, role, created_at)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
			x.Account, first+"@"+slug+".test", first, last, role, at)
	}
	x.Admin = user("alice", "Zed", "admin", hours(0))
	x.Member = user("bob", "Young", "member", hours(1))
	x.Viewer = user("carol", "", "viewer", hours(2))

	pods := []any{f.PortLA, f.PortOK, nil}
	terms := []any{f.TermLA, f.TermOK, nil}
	x.ContainerShipment = map[string]string{}
	for i := 0; i < nShipments; i++ {
		var eta, stopped any
		if i%4 != 0 {
			eta = days(i % 5)
		}
		if i%5 == 0 {
			stopped = hours(100)
		}
		var refs any
		if i == 3 || i == 5 {
			refs = pq.Array([]string{"PO-777", fmt.Sprintf("R%d", i)})
		}
		tags := []string{}
		if i%3 == 0 {
			tags = append(tags, "hot")
		}
		if i%2 == 0 {
			tags = append(tags, "cold")
		}
		scac := "MAEU"
		line := f.LineMA
		if i%2 == 1 {
			scac, line = "MSCU", f.LineMS
		}
		s := f.id(t, `INSERT INTO shipments (account_id, bill_of_lading_number, normalized_number, ref_numbers, tags,
				shipping_line_id, shipping_line_scac, shipping_line_name, shipping_line_short_name,
				port_of_discharge_id, pod_terminal_id, pod_eta_at, line_tracking_stopped_at, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $7, $8, $9, $10, $11, $12) RETURNING id`,
			x.Account, shipmentBOL(i), fmt.Sprintf("NRM%d", i), refs, pq.Array(tags),
			line, scac, pods[i%3], terms[i%3], eta, stopped, hours(i/3))
		x.Shipments = append(x.Shipments, s)
	}

	// Containers: shipment i has i%3 of them; created_at ties in pairs;
	// pickup_lfd NULL for every third; holds on every fourth; numbers
	// collide across accounts and one is stored lowercase.
	statuses := []string{"new", "on_ship", "available", "picked_up"}
	n := 0
	for i, s := range x.Shipments {
		for j := 0; j < i%3; j++ {
			var lfd, avail any
			if n%3 != 0 {
				lfd = days(n % 4)
			}
			switch n % 3 {
			case 1:
				avail = true
			case 2:
				avail = false
			}
			holds := "[]"
			if n%4 == 0 {
				holds = `[{"name":"customs","status":"hold","description":null}]`
			}
			number := fmt.Sprintf("MSCU%07d", n)
			if n == 1 {
				number = "tcnu0000001"
			}
			c := f.id(t, `INSERT INTO containers (account_id, shipment_id, number, ref_numbers, pod_terminal_id,
					pickup_lfd_line, available_for_pickup, holds_at_pod_terminal, current_status, created_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
				x.Account, s, number, pq.Array([]string{fmt.Sprintf("CREF%d", n)}), terms[n%3], lfd, avail, holds,
				statuses[n%4], hours(n/2))
			x.Containers = append(x.Containers, c)
			x.ContainerShipment[c] = s
			n++
		}
	}

	x.Email = f.id(t, `INSERT INTO email_submissions (account_id, user_id, subject) VALUES ($1, $2, 'docs') RETURNING id`, x.Account, x.Admin)
	// Documents: 8 with tied created_at in pairs, users alice/bob/none,
	// three types, one manual type, file names made for the tsvector.
	type doc struct {
		user          any
		typ, manual   any
		file          string
		shipIdx, cIdx []int
	}
	docs := []doc{
		{x.Admin, "bill_of_lading", nil, "BL_MAEU0000.pdf", []int{0}, nil},
		{x.Member, "invoice", nil, "invoice-2024-03.PDF", []int{1}, []int{0}},
		{nil, "packing_list", nil, "Packing List (final).xlsx", nil, []int{1}},
		{x.Admin, "invoice", "bill_of_lading", "scan_0042.pdf", []int{3}, nil},
		{x.Viewer, "other", nil, "arrival notice.pdf", nil, nil},
		{x.Member, "bill_of_lading", nil, "bl-second.pdf", []int{0, 2}, nil},
		{nil, "invoice", nil, "INV_final_v2.pdf", nil, nil},
		{x.Admin, "packing_list", nil, "packing-100%_sure.pdf", nil, nil},
	}
	for i, dc := range docs {
		if nShipments < nShipmentsA && i >= 3 {
			break // account B gets the first three documents only
		}
		id := f.id(t, `INSERT INTO documents (account_id, user_id, email_submission_id, name, document_type,
				document_type_manual, source, file_name, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, 'upload', $4, $7) RETURNING id`,
			x.Account, dc.user, x.Email, dc.file, dc.typ, dc.manual, hours(i/2))
		x.Documents = append(x.Documents, id)
		for _, s := range dc.shipIdx {
			f.exec(t, `INSERT INTO document_shipments (account_id, document_id, shipment_id) VALUES ($1, $2, $3)`, x.Account, id, x.Shipments[s])
		}
		for _, c := range dc.cIdx {
			if c < len(x.Containers) {
				f.exec(t, `INSERT INTO document_containers (account_id, document_id, container_id) VALUES ($1, $2, $3)`, x.Account, id, x.Containers[c])
			}
		}
	}
	x.Representation = f.id(t, `INSERT INTO document_representations (account_id, document_id, schema_version, payload)
		VALUES ($1, $2, 'v1', '{"a": 1}') RETURNING id`, x.Account, x.Documents[0])
	f.exec(t, `UPDATE documents SET last_document_representation_id = $1 WHERE id = $2`, x.Representation, x.Documents[0])

	// Custom fields: created through the store (CreateCustomFieldDefinition
	// fills ids), with tied created_at and display names set after.
	def := func(entity, slug, name, dataType string, at time.Time) string {
		d := &model.CustomFieldDefinition{EntityType: model.CustomFieldEntityType(entity), APISlug: slug,
			DisplayName: name, DataType: model.CustomFieldDataType(dataType)}
		if err := f.DB.CreateCustomFieldDefinition(context.Background(), x.Account, d); err != nil {
			t.Fatal(err)
		}
		f.exec(t, `UPDATE custom_field_definitions SET created_at = $1 WHERE id = $2`, at, d.ID)
		x.Defs = append(x.Defs, d.ID)
		return d.ID
	}
	x.DefPriority = def("Shipment", "priority", "Priority", "enum", hours(0))
	x.DefFlags = def("Shipment", "flags", "Flags", "enum_multi", hours(0))
	x.DefNote = def("Container", "note", "Note", "short_text", hours(1))
	def("Shipment", "dup_one", "Dup", "short_text", hours(1))
	def("Shipment", "dup_two", "Dup", "number", hours(2))
	def("Container", "percent", "100% done_x", "boolean", hours(2))

	opt := func(defID, label, value string, pos any) string {
		return f.id(t, `INSERT INTO custom_field_options (account_id, definition_id, label, value, position) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
			x.Account, defID, label, value, pos)
	}
	x.OptHigh = opt(x.DefPriority, "High", "high", 1)
	x.OptMed = opt(x.DefPriority, "Medium", "med", nil)
	x.OptLow = opt(x.DefPriority, "Low", "low", 2)
	x.OptA = opt(x.DefFlags, "Alpha", "a", 3)
	x.OptB = opt(x.DefFlags, "Bravo", "b", 2)
	x.OptC = opt(x.DefFlags, "Charlie", "c", 1)

	val := func(defID, column, entity, value string) string {
		return f.id(t, `INSERT INTO custom_fields (account_id, definition_id, `+column+`, value) VALUES ($1, $2, $3, $4) RETURNING id`,
			x.Account, defID, entity, value)
	}
	x.ValPriority = val(x.DefPriority, "shipment_id", x.Shipments[0], `"high"`)
	x.ValFlags = val(x.DefFlags, "shipment_id", x.Shipments[0], `["c", "a"]`)
	x.ValNote = val(x.DefNote, "container_id", x.Containers[0], `"fragile"`)
	return x
}

// ids returns the ids of items.
func ids[T interface{ GetID() string }](items []T) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.GetID()
	}
	return out
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := model.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}
