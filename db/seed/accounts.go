package seed

import (
	"crypto/sha256"
	"time"

	"shipgraph/model"
)

// Demo accounts, their users, API keys and custom field definitions.

type seedAccount struct {
	id, slug, company string
	users             [3]seedUser // admin, member, viewer
	shipmentDefs      []*seedFieldDef
	containerDefs     []*seedFieldDef
	weight            int // share of the shipments
}

type seedUser struct{ id, email, first, last, role string }

type seedFieldDef struct {
	id, slug, name, description, dataType, entity, refType string
	validation, defaultValue                               string // JSON, "" = NULL
	options                                                []seedOption
}

type seedOption struct{ id, label, value string }

var seedAccountSpecs = []struct {
	slug, company string
	weight        int
	people        [3][2]string
}{
	// acme gets two thirds of the shipments: a big and a small tenant
	// make per-account scoping bugs visible in counts.
	{"acme", "Acme Logistics", 2, [3][2]string{{"Alice", "Moreno"}, {"Ben", "Okafor"}, {"Chloe", "Nguyen"}}},
	{"globex", "Globex Freight", 1, [3][2]string{{"Dana", "Whitfield"}, {"Eli", "Park"}, {"Farah", "Haddad"}}},
}

// seedRoles is also the order of the returned tokens within an account.
var seedRoles = [3]string{model.RoleAdmin, model.RoleMember, model.RoleViewer}

// seedFieldSpecs: one definition of every data type on shipments, two on
// containers. Option lists are value/label pairs, in position order.
var seedFieldSpecs = []struct {
	entity, slug, name, description, dataType, refType, validation, defaultValue string
	options                                                                      [][2]string
}{
	{"Shipment", "customer_po", "Customer PO", "Purchase order number given by the customer.", "short_text", "", "", "", nil},
	{"Shipment", "declared_value_usd", "Declared value (USD)", "Commercial value of the cargo, for insurance.", "number", "", `{"min": 0}`, "", nil},
	{"Shipment", "requested_delivery_date", "Requested delivery date", "Date the consignee asked for.", "date", "", "", "", nil},
	{"Shipment", "dock_appointment_at", "Dock appointment", "Delivery appointment at the consignee's dock.", "datetime", "", "", "", nil},
	{"Shipment", "hazmat", "Hazardous cargo", "Cargo includes dangerous goods (IMDG).", "boolean", "", "", "false", nil},
	{"Shipment", "priority_level", "Priority", "How urgently the cargo is needed.", "enum", "", "", "", [][2]string{
		{"low", "Low"}, {"normal", "Normal"}, {"high", "High"}, {"critical", "Critical"}}},
	{"Shipment", "handling_requirements", "Handling requirements", "Special handling at delivery.", "enum_multi", "", "", "", [][2]string{
		{"fragile", "Fragile"}, {"temperature_controlled", "Temperature controlled"}, {"liftgate", "Liftgate required"},
		{"oversized", "Oversized"}, {"hand_unload", "Hand unload"}}},
	{"Shipment", "account_manager", "Account manager", "Team member responsible for the shipment.", "reference", "user", "", "", nil},
	{"Container", "chassis_provider", "Chassis provider", "Chassis pool used for the dray.", "enum", "", "", "", [][2]string{
		{"dcli", "DCLI"}, {"trac", "TRAC Intermodal"}, {"flexivan", "Flexi-Van"}, {"milestone", "Milestone"}, {"own", "Own chassis"}}},
	{"Container", "yard_slot", "Yard slot", "Where the box sits in our yard.", "short_text", "", "", "", nil},
}

// seedBuildAccounts creates the accounts, users and field definitions, all
// ids from r (the accounts stream for people and keys, fr for fields).
func seedBuildAccounts(r, fr *seedRand) []*seedAccount {
	var out []*seedAccount
	for _, spec := range seedAccountSpecs {
		a := &seedAccount{id: r.uuid(), slug: spec.slug, company: spec.company, weight: spec.weight}
		for i, role := range seedRoles {
			a.users[i] = seedUser{id: r.uuid(), email: role + "@" + spec.slug + ".example",
				first: spec.people[i][0], last: spec.people[i][1], role: role}
		}
		for _, f := range seedFieldSpecs {
			d := &seedFieldDef{id: fr.uuid(), slug: f.slug, name: f.name, description: f.description,
				dataType: f.dataType, entity: f.entity, refType: f.refType, validation: f.validation,
				defaultValue: f.defaultValue}
			for _, o := range f.options {
				d.options = append(d.options, seedOption{id: fr.uuid(), value: o[0], label: o[1]})
			}
			if f.entity == "Shipment" {
				a.shipmentDefs = append(a.shipmentDefs, d)
			} else {
				a.containerDefs = append(a.containerDefs, d)
			}
		}
		out = append(out, a)
	}
	return out
}

// seedKey makes an API key: "sg_" and 40 hex digits from the seeded stream,
// so the same seed always prints the same keys.
func seedKey(r *seedRand) string { return "sg_" + r.hex(40) }

// seedAccountRows returns the rows of accounts, users, api_tokens,
// custom_field_definitions and custom_field_options, and the API keys.
func seedAccountRows(r *seedRand, accounts []*seedAccount, now time.Time) (rows map[*seedTable][][]any, tokens []Token) {
	rows = map[*seedTable][][]any{}
	created := now.Add(-400 * 24 * time.Hour)
	for _, a := range accounts {
		rows[seedAccountsTable] = append(rows[seedAccountsTable], []any{a.id, a.slug, a.company, created, created})
		for i, u := range a.users {
			at := created.Add(time.Duration(i+1) * time.Hour)
			rows[seedUsersTable] = append(rows[seedUsersTable], []any{u.id, a.id, u.email, u.first, u.last, u.role, at, at})
		}
		for i, u := range a.users {
			key := seedKey(r)
			sum := sha256.Sum256([]byte(key))
			at := created.Add(time.Duration(i+1)*time.Hour + time.Minute)
			rows[seedTokensTable] = append(rows[seedTokensTable],
				[]any{r.uuid(), a.id, u.id, u.role, sum[:], key[:10], "seed " + u.role + " key", at})
			tokens = append(tokens, Token{Account: a.slug, Role: u.role, Key: key})
		}
		defs := append(append([]*seedFieldDef(nil), a.shipmentDefs...), a.containerDefs...)
		for i, d := range defs {
			at := created.Add(24*time.Hour + time.Duration(i)*time.Minute)
			rows[seedDefsTable] = append(rows[seedDefsTable], []any{d.id, a.id, d.entity, d.slug, d.name,
				seedStr(d.description), d.dataType, seedStr(d.refType), seedStr(d.validation), nil,
				seedStr(d.defaultValue), at, at})
			for pos, o := range d.options {
				rows[seedOptionsTable] = append(rows[seedOptionsTable],
					[]any{o.id, a.id, d.id, o.label, o.value, int64(pos + 1), at, at})
			}
		}
	}
	return rows, tokens
}

// seedReferenceRows returns the rows of the reference tables.
func seedReferenceRows(ref *seedReference, now time.Time) map[*seedTable][][]any {
	rows := map[*seedTable][][]any{}
	at := now.Add(-500 * 24 * time.Hour)
	for _, p := range ref.ports {
		rows[seedPortsTable] = append(rows[seedPortsTable], []any{p.id, p.code, p.name, seedStr(p.city),
			seedStr(p.stateAbbr), p.country, p.tz, p.lat, p.long, at})
	}
	for _, m := range ref.metros {
		rows[seedMetrosTable] = append(rows[seedMetrosTable], []any{m.id, m.code, m.name, m.stateAbbr, "US", m.tz, m.lat, m.long, at})
	}
	for _, t := range ref.terminals {
		rows[seedTerminalsTable] = append(rows[seedTerminalsTable], []any{t.id, t.port.id, t.name, seedStr(t.nickname),
			seedStr(t.firms), seedStr(t.city), seedStr(t.state), seedStr(t.stateAbbr), seedStr(t.country), at})
	}
	for _, t := range ref.rails {
		rows[seedRailTable] = append(rows[seedRailTable], []any{t.id, nil, t.metro.id, t.name, t.nickname, t.firms, at})
	}
	for _, l := range ref.lines {
		rows[seedLinesTable] = append(rows[seedLinesTable], []any{l.id, l.scac, l.name, l.short, seedStr(l.bolPrefix),
			"{}", l.blSupport, l.bookingSupport, l.containerSupport, at})
	}
	return rows
}

// seedStr is s, or NULL when empty.
func seedStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// seedTS is t, or NULL when zero.
func seedTS(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}
