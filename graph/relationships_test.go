package graph_test

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"shipgraph/testkit"
)

// The relationship tests read a page of parents with their relationships
// through GraphQL and compare every parent's related ids with the tables.

type idObj struct{ ID string }

func ids(objs []idObj) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.ID
	}
	return out
}

// groupRows turns (parent, child) rows into sorted child ids by parent.
func groupRows(rows [][]string) map[string][]string {
	m := map[string][]string{}
	for _, r := range rows {
		if r[1] != "" {
			m[r[0]] = append(m[r[0]], r[1])
		}
	}
	for _, v := range m {
		sort.Strings(v)
	}
	return m
}

func sameSet(got, want []string) bool {
	g := slices.Clone(got)
	sort.Strings(g)
	w := slices.Clone(want)
	sort.Strings(w)
	return slices.Equal(g, w)
}

func testShipmentRelationships(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	acme := e.Account(t, "acme")
	var d struct {
		Shipments struct {
			Nodes []struct {
				ID                        string
				Containers                []idObj
				Documents                 []idObj
				PortOfLading              *idObj
				PortOfDischarge           *idObj
				PodTerminal               *idObj
				Destination               *struct{ Typename, ID string }
				DestinationTerminal       *struct{ Typename, ID string }
				LineTrackingStoppedByUser *idObj
				CustomFields              []struct {
					ID, APISlug string
					Definition  struct{ ID, APISlug string }
					Entity      struct{ Typename, ID string }
				}
				Priority *struct{ APISlug string }
				Missing  *idObj
			}
		}
	}
	const q = `{ shipments(first: 100, orderBy: {field: BILL_OF_LADING_NUMBER}) { nodes {
		id
		containers { id }
		documents { id }
		portOfLading { id } portOfDischarge { id } podTerminal { id }
		destination { typename: __typename ... on Port { id } ... on MetroArea { id } }
		destinationTerminal { typename: __typename ... on Terminal { id } ... on RailTerminal { id } }
		lineTrackingStoppedByUser { id }
		customFields { id apiSlug definition { id apiSlug } entity { typename: __typename ... on Shipment { id } } }
		priority: customField(apiSlug: "priority_level") { apiSlug }
		missing: customField(apiSlug: "no_such_field") { id }
	} } }`
	e.Must(t, k, q, nil, &d)
	nodes := d.Shipments.Nodes
	if len(nodes) != 100 {
		t.Fatalf("got %d shipments, want 100", len(nodes))
	}
	containers := groupRows(e.Rows(t, `SELECT shipment_id, id FROM containers WHERE account_id = $1`, acme))
	documents := groupRows(e.Rows(t, `SELECT ds.shipment_id, ds.document_id FROM document_shipments ds JOIN documents d ON d.account_id = ds.account_id AND d.id = ds.document_id WHERE d.account_id = $1`, acme))
	fields := groupRows(e.Rows(t, `SELECT shipment_id, id FROM custom_fields WHERE account_id = $1 AND shipment_id IS NOT NULL`, acme))
	fk := map[string][]string{}
	for _, r := range e.Rows(t, `SELECT id, coalesce(port_of_lading_id::text, ''), coalesce(port_of_discharge_id::text, ''),
		coalesce(pod_terminal_id::text, ''), coalesce(destination_port_id::text, ''), coalesce(destination_metro_area_id::text, ''),
		coalesce(destination_terminal_id::text, ''), coalesce(destination_rail_terminal_id::text, ''),
		coalesce(line_tracking_stopped_by_user_id::text, '') FROM shipments WHERE account_id = $1`, acme) {
		fk[r[0]] = r[1:]
	}
	opt := func(o *idObj) string {
		if o == nil {
			return ""
		}
		return o.ID
	}
	seen := map[string]int{}
	for _, s := range nodes {
		if !sameSet(ids(s.Containers), containers[s.ID]) {
			t.Errorf("shipment %s: containers %v, want %v", s.ID, ids(s.Containers), containers[s.ID])
		}
		if !sameSet(ids(s.Documents), documents[s.ID]) {
			t.Errorf("shipment %s: documents %v, want %v", s.ID, ids(s.Documents), documents[s.ID])
		}
		var cf []string
		hasPriority := false
		for _, f := range s.CustomFields {
			cf = append(cf, f.ID)
			if f.APISlug != f.Definition.APISlug || f.Entity.Typename != "Shipment" || f.Entity.ID != s.ID {
				t.Errorf("shipment %s: custom field %+v", s.ID, f)
			}
			hasPriority = hasPriority || f.APISlug == "priority_level"
		}
		if !sameSet(cf, fields[s.ID]) {
			t.Errorf("shipment %s: custom fields %v, want %v", s.ID, cf, fields[s.ID])
		}
		if hasPriority != (s.Priority != nil) || (s.Priority != nil && s.Priority.APISlug != "priority_level") {
			t.Errorf("shipment %s: customField(priority_level) = %+v, has the value: %v", s.ID, s.Priority, hasPriority)
		}
		if s.Missing != nil {
			t.Errorf("shipment %s: customField(no_such_field) = %+v, want null", s.ID, s.Missing)
		}
		want := fk[s.ID]
		got := []string{opt(s.PortOfLading), opt(s.PortOfDischarge), opt(s.PodTerminal), "", "", "", "", opt(s.LineTrackingStoppedByUser)}
		if s.Destination != nil {
			seen["destination "+s.Destination.Typename]++
			if s.Destination.Typename == "Port" {
				got[3] = s.Destination.ID
			} else {
				got[4] = s.Destination.ID
			}
		}
		if s.DestinationTerminal != nil {
			seen["destinationTerminal "+s.DestinationTerminal.Typename]++
			if s.DestinationTerminal.Typename == "Terminal" {
				got[5] = s.DestinationTerminal.ID
			} else {
				got[6] = s.DestinationTerminal.ID
			}
		}
		if s.LineTrackingStoppedByUser != nil {
			seen["stoppedByUser"]++
		}
		// A metro-area destination wins over a port one, and a rail
		// terminal over a port terminal (the resolvers' rule).
		if want[4] != "" {
			want = slices.Clone(want)
			want[3] = ""
		}
		if want[6] != "" {
			want = slices.Clone(want)
			want[5] = ""
		}
		if !slices.Equal(got, want) {
			t.Errorf("shipment %s: to-one ids %v, want %v", s.ID, got, want)
		}
		if len(s.Containers) > 0 {
			seen["containers"]++
		}
		if len(s.Documents) > 0 {
			seen["documents"]++
		}
	}
	for _, what := range []string{"destination Port", "destination MetroArea", "destinationTerminal Terminal",
		"destinationTerminal RailTerminal", "stoppedByUser", "containers", "documents"} {
		if seen[what] == 0 {
			t.Errorf("no shipment of the page has %s: the test covers nothing there", what)
		}
	}
}

func testContainerRelationships(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	acme := e.Account(t, "acme")
	var d struct {
		Containers struct {
			Nodes []struct {
				ID             string
				Shipment       idObj
				PodTerminal    *idObj
				PickupFacility *idObj
				CustomFields   []struct {
					ID     string
					Entity struct{ Typename, ID string }
				}
				Documents []idObj
			}
		}
	}
	e.Must(t, k, `{ containers(first: 100, orderBy: {field: NUMBER}) { nodes {
		id shipment { id } podTerminal { id } pickupFacility { id }
		customFields { id entity { typename: __typename ... on Container { id } } }
		documents { id }
	} } }`, nil, &d)
	if len(d.Containers.Nodes) != 100 {
		t.Fatalf("got %d containers, want 100", len(d.Containers.Nodes))
	}
	fk := map[string][]string{}
	for _, r := range e.Rows(t, `SELECT id, shipment_id, coalesce(pod_terminal_id::text, ''), coalesce(pickup_facility_id::text, '')
		FROM containers WHERE account_id = $1`, acme) {
		fk[r[0]] = r[1:]
	}
	fields := groupRows(e.Rows(t, `SELECT container_id, id FROM custom_fields WHERE account_id = $1 AND container_id IS NOT NULL`, acme))
	documents := groupRows(e.Rows(t, `SELECT dc.container_id, dc.document_id FROM document_containers dc JOIN documents d ON d.account_id = dc.account_id AND d.id = dc.document_id WHERE d.account_id = $1`, acme))
	var withFields, withDocs, withPickup int
	for _, c := range d.Containers.Nodes {
		got := []string{c.Shipment.ID, "", ""}
		if c.PodTerminal != nil {
			got[1] = c.PodTerminal.ID
		}
		if c.PickupFacility != nil {
			got[2] = c.PickupFacility.ID
			withPickup++
		}
		if !slices.Equal(got, fk[c.ID]) {
			t.Errorf("container %s: shipment, podTerminal, pickupFacility = %v, want %v", c.ID, got, fk[c.ID])
		}
		var cf []string
		for _, f := range c.CustomFields {
			cf = append(cf, f.ID)
			if f.Entity.Typename != "Container" || f.Entity.ID != c.ID {
				t.Errorf("container %s: custom field %+v", c.ID, f)
			}
		}
		if !sameSet(cf, fields[c.ID]) {
			t.Errorf("container %s: custom fields %v, want %v", c.ID, cf, fields[c.ID])
		}
		if !sameSet(ids(c.Documents), documents[c.ID]) {
			t.Errorf("container %s: documents %v, want %v", c.ID, ids(c.Documents), documents[c.ID])
		}
		withFields += min(len(cf), 1)
		withDocs += min(len(c.Documents), 1)
	}
	if withFields == 0 || withDocs == 0 || withPickup == 0 {
		t.Errorf("page covers %d containers with custom fields, %d with documents, %d with a pickup facility; want some of each", withFields, withDocs, withPickup)
	}
}

func testDocumentRelationships(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	acme := e.Account(t, "acme")
	var d struct {
		Documents struct {
			Nodes []struct {
				ID                         string
				Shipments                  []idObj
				Cargos                     []idObj
				Account                    idObj
				User                       *idObj
				EmailSubmission            *idObj
				LastDocumentRepresentation *idObj
			}
		}
	}
	e.Must(t, k, `{ documents(first: 100) { nodes {
		id shipments { id } cargos { id } account { id } user { id } emailSubmission { id } lastDocumentRepresentation { id }
	} } }`, nil, &d)
	if len(d.Documents.Nodes) == 0 {
		t.Fatal("no documents")
	}
	shipments := groupRows(e.Rows(t, `SELECT ds.document_id, ds.shipment_id FROM document_shipments ds JOIN documents d ON d.account_id = ds.account_id AND d.id = ds.document_id WHERE d.account_id = $1`, acme))
	cargos := groupRows(e.Rows(t, `SELECT dc.document_id, dc.container_id FROM document_containers dc JOIN documents d ON d.account_id = dc.account_id AND d.id = dc.document_id WHERE d.account_id = $1`, acme))
	fk := map[string][]string{}
	for _, r := range e.Rows(t, `SELECT id, account_id, coalesce(user_id::text, ''), coalesce(email_submission_id::text, ''),
		coalesce(last_document_representation_id::text, '') FROM documents WHERE account_id = $1`, acme) {
		fk[r[0]] = r[1:]
	}
	seen := map[string]int{}
	for _, doc := range d.Documents.Nodes {
		if !sameSet(ids(doc.Shipments), shipments[doc.ID]) {
			t.Errorf("document %s: shipments %v, want %v", doc.ID, ids(doc.Shipments), shipments[doc.ID])
		}
		if !sameSet(ids(doc.Cargos), cargos[doc.ID]) {
			t.Errorf("document %s: cargos %v, want %v", doc.ID, ids(doc.Cargos), cargos[doc.ID])
		}
		got := []string{doc.Account.ID, "", "", ""}
		for i, o := range []*idObj{doc.User, doc.EmailSubmission, doc.LastDocumentRepresentation} {
			if o != nil {
				got[i+1] = o.ID
				seen[[]string{"user", "email", "representation"}[i]]++
			}
		}
		if !slices.Equal(got, fk[doc.ID]) {
			t.Errorf("document %s: account, user, emailSubmission, lastDocumentRepresentation = %v, want %v", doc.ID, got, fk[doc.ID])
		}
		if len(doc.Shipments) > 0 {
			seen["shipments"]++
		}
		if len(doc.Cargos) > 0 {
			seen["cargos"]++
		}
	}
	for _, what := range []string{"user", "email", "representation", "shipments", "cargos"} {
		if seen[what] == 0 {
			t.Errorf("no document of the page has %s: the test covers nothing there", what)
		}
	}
}

func testCustomFieldRelationships(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	acme := e.Account(t, "acme")
	var d struct {
		CustomFieldDefinitions struct {
			TotalCount int
			Nodes      []struct {
				ID, APISlug, DataType string
				Options               []struct {
					ID, Label, Value string
					Position         *int
					Definition       idObj
				}
			}
		}
	}
	e.Must(t, k, `{ customFieldDefinitions(first: 100) { totalCount nodes { id apiSlug dataType options { id label value position definition { id } } } } }`, nil, &d)
	var n int
	e.SQL(t, &n, `SELECT count(*) FROM custom_field_definitions WHERE account_id = $1`, acme)
	if d.CustomFieldDefinitions.TotalCount != n || len(d.CustomFieldDefinitions.Nodes) != n {
		t.Fatalf("%d definitions (totalCount %d), want %d", len(d.CustomFieldDefinitions.Nodes), d.CustomFieldDefinitions.TotalCount, n)
	}
	options := map[string][]string{}
	for _, r := range e.Rows(t, `SELECT definition_id, id FROM custom_field_options ORDER BY definition_id, position NULLS LAST, value, id`) {
		options[r[0]] = append(options[r[0]], r[1])
	}
	var withOptions int
	for _, def := range d.CustomFieldDefinitions.Nodes {
		var got []string
		for _, o := range def.Options {
			got = append(got, o.ID)
			if o.Definition.ID != def.ID {
				t.Errorf("option %s of %s: definition %s", o.ID, def.APISlug, o.Definition.ID)
			}
		}
		want := options[def.ID]
		if def.DataType != "ENUM" && def.DataType != "ENUM_MULTI" {
			want = nil
		} else {
			withOptions++
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s (%s): options %v, want %v in position order", def.APISlug, def.DataType, got, want)
		}
	}
	if withOptions == 0 {
		t.Error("no definition with options")
	}

	// Values and their display: through node(id), one value per data type.
	rows := e.Rows(t, `SELECT DISTINCT ON (d.data_type) cf.id, d.data_type, d.api_slug, cf.definition_id, cf.value::text
		FROM custom_fields cf JOIN custom_field_definitions d ON d.account_id = cf.account_id AND d.id = cf.definition_id
		WHERE cf.account_id = $1 AND cf.value IS NOT NULL
		  AND (d.data_type <> 'enum_multi' OR jsonb_array_length(cf.value) > 1)
		ORDER BY d.data_type, cf.id`, acme)
	types := map[string]bool{}
	for _, r := range rows {
		id, dataType, slug, defID := r[0], r[1], r[2], r[3]
		types[dataType] = true
		var v struct {
			Node struct {
				ID, APISlug  string
				DisplayValue *string
				Value        any
				Definition   idObj
				Entity       struct{ Typename string }
			}
		}
		e.Must(t, k, `query($id: ID!) { node(id: $id) { ... on CustomField { id apiSlug displayValue value definition { id } entity { typename: __typename } } } }`,
			testkit.Vars{"id": id}, &v)
		n := v.Node
		if n.ID != id || n.APISlug != slug || n.Definition.ID != defID || n.DisplayValue == nil {
			t.Errorf("custom field %s (%s): %+v", id, dataType, n)
			continue
		}
		want := expectedDisplay(t, e, dataType, defID, r[4])
		if want != "" && *n.DisplayValue != want {
			t.Errorf("custom field %s (%s, %s): displayValue %q, want %q", id, dataType, r[4], *n.DisplayValue, want)
		}
	}
	for _, dt := range []string{"enum", "enum_multi", "boolean", "date", "short_text"} {
		if !types[dt] {
			t.Errorf("no %s custom field value in the seed", dt)
		}
	}
}

// expectedDisplay is the display value the API documents for a stored
// value: an enum's label(s), Yes/No, a formatted date; "" = not checked.
func expectedDisplay(t *testing.T, e *testkit.Env, dataType, defID, raw string) string {
	switch dataType {
	case "enum", "enum_multi":
		var labels []string
		e.SQL(t, &labels, `SELECT o.label FROM jsonb_array_elements_text(CASE jsonb_typeof($2::jsonb) WHEN 'array' THEN $2::jsonb ELSE jsonb_build_array($2::jsonb) END) WITH ORDINALITY v(value, n)
			JOIN custom_field_options o ON o.definition_id = $1 AND o.value = v.value ORDER BY v.n`, defID, raw)
		return strings.Join(labels, ", ")
	case "boolean":
		if raw == "true" {
			return "Yes"
		}
		return "No"
	case "date":
		return e.Text(t, `SELECT to_char(($1::jsonb #>> '{}')::date, 'Mon FMDD, YYYY')`, raw)
	case "short_text":
		return e.Text(t, `SELECT $1::jsonb #>> '{}'`, raw)
	}
	return ""
}

func testReferenceData(t *testing.T, e *testkit.Env) {
	k := e.Key(t, globexViewer)
	rows := e.Rows(t, `SELECT t.id, t.port_id, p.code FROM terminals t JOIN ports p ON p.id = t.port_id ORDER BY t.id LIMIT 5`)
	for _, r := range rows {
		var d struct {
			Terminal struct {
				ID   string
				Port struct{ ID, Code string }
			}
			Port struct{ ID, Code string }
		}
		e.Must(t, k, `query($t: ID!, $p: ID!) { terminal(id: $t) { id port { id code } } port(id: $p) { id code } }`,
			testkit.Vars{"t": r[0], "p": r[1]}, &d)
		if d.Terminal.ID != r[0] || d.Terminal.Port.ID != r[1] || d.Port.ID != r[1] || d.Port.Code != r[2] {
			t.Errorf("terminal %s / port %s: %+v", r[0], r[1], d)
		}
	}
	// port(id:) also takes a UN/LOCODE, in any case; an unknown one is null.
	for _, r := range rows {
		var d struct {
			Upper, Lower *struct{ ID, Code string }
			Unknown      *struct{ ID string }
		}
		e.Must(t, k, `query($c: ID!, $lc: ID!) { upper: port(id: $c) { id code } lower: port(id: $lc) { id code } unknown: port(id: "ZZZ99") { id } }`,
			testkit.Vars{"c": r[2], "lc": strings.ToLower(r[2])}, &d)
		if d.Upper == nil || d.Upper.ID != r[1] || d.Lower == nil || d.Lower.ID != r[1] || d.Unknown != nil {
			t.Errorf("port by code %s: %+v", r[2], d)
		}
	}
	// metroArea(id:) also takes a UN/LOCODE, in any case (the OpenAPI
	// document's /metro_areas/{id}); an unknown one is null.
	for _, r := range e.Rows(t, `SELECT id, code FROM metro_areas ORDER BY id LIMIT 3`) {
		var d struct {
			ByID, Upper, Lower *struct{ ID, Code string }
			Unknown            *struct{ ID string }
		}
		e.Must(t, k, `query($id: ID!, $c: ID!, $lc: ID!) { byID: metroArea(id: $id) { id code } upper: metroArea(id: $c) { id code } lower: metroArea(id: $lc) { id code } unknown: metroArea(id: "ZZZ99") { id } }`,
			testkit.Vars{"id": r[0], "c": r[1], "lc": strings.ToLower(r[1])}, &d)
		for _, m := range []*struct{ ID, Code string }{d.ByID, d.Upper, d.Lower} {
			if m == nil || m.ID != r[0] || m.Code != r[1] {
				t.Errorf("metro area %s: %+v", r[1], d)
			}
		}
		if d.Unknown != nil {
			t.Errorf("metroArea(id: ZZZ99): %+v", d.Unknown)
		}
	}
	// Rail terminals are reached through node and Shipment.destinationTerminal.
	for _, r := range e.Rows(t, `SELECT id, coalesce(port_id::text, ''), coalesce(metro_area_id::text, '') FROM rail_terminals ORDER BY id LIMIT 3`) {
		var d struct {
			Node struct {
				ID        string
				Port      *idObj
				MetroArea *idObj
			}
		}
		e.Must(t, k, `query($id: ID!) { node(id: $id) { ... on RailTerminal { id port { id } metroArea { id } } } }`, testkit.Vars{"id": r[0]}, &d)
		got := []string{d.Node.ID, "", ""}
		if d.Node.Port != nil {
			got[1] = d.Node.Port.ID
		}
		if d.Node.MetroArea != nil {
			got[2] = d.Node.MetroArea.ID
		}
		if !slices.Equal(got, r) {
			t.Errorf("rail terminal: %v, want %v", got, r)
		}
	}
}

func testViewer(t *testing.T, e *testkit.Env) {
	for _, who := range []string{acmeAdmin, acmeMember, acmeViewer, globexAdmin, globexViewer} {
		var d struct {
			Viewer struct {
				Account struct{ ID, CompanyName string }
				User    *struct{ ID, Email, Role string }
				Role    string
			}
		}
		e.Must(t, e.Key(t, who), `{ viewer { account { id companyName } user { id email role } role } }`, nil, &d)
		slug, role, _ := strings.Cut(who, "/")
		v := d.Viewer
		if v.Account.ID != e.Account(t, slug) || v.Role != strings.ToUpper(role) || v.User == nil ||
			v.User.Email != role+"@"+slug+".example" || v.User.Role != strings.ToUpper(role) {
			t.Errorf("%s: viewer %+v", who, v)
		}
	}
}

func testNode(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	for _, id := range []string{"", "nope", "00000000-0000-0000-0000-000000000000", "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
		"6BA7B810-9DAD-11D1-80B4-00C04FD430C8", "{6ba7b810-9dad-11d1-80b4-00c04fd430c8}"} {
		res := e.Do(t, k, `query($id: ID!) { node(id: $id) { id } }`, testkit.Vars{"id": id})
		if len(res.Errors) > 0 || string(res.Data) != `{"node":null}` {
			t.Errorf("node(%q) = %s; want null without errors", id, res)
		}
	}
}

func testRootByIDMissing(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	for _, id := range []string{"nope", "00000000-0000-0000-0000-000000000000", "'; DROP TABLE shipments; --"} {
		res := e.Do(t, k, `query($id: ID!) { shipment(id: $id) { id } container(id: $id) { id } document(id: $id) { id }
			terminal(id: $id) { id } port(id: $id) { id } customFieldDefinition(id: $id) { id } node(id: $id) { id } }`, testkit.Vars{"id": id})
		var got map[string]any
		res.Decode(t, &got)
		for _, f := range []string{"shipment", "container", "document", "terminal", "port", "customFieldDefinition", "node"} {
			if v, ok := got[f]; !ok || v != nil {
				t.Errorf("by id %q: %s = %v; want null", id, f, v)
			}
		}
		if len(res.Errors) > 0 {
			t.Errorf("by id %q: %s; want no errors", id, res)
		}
	}
}
