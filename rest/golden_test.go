package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode"
)

// fixtures are ids (and values) of the seeded data the cases use, found
// through the API itself: the seed is fixed, so they are the same each run.
type fixtures struct {
	shipment, container, document, terminal, port string
	portCode                                      string // the port's UN/LOCODE
	// A shipment whose destination is a metro area and one whose
	// destination terminal is a rail terminal, when the data has them.
	metroShipment, railShipment string
	// A shipment with custom field values.
	fieldsShipment       string
	bol, containerNumber string
	// A document's file name, and the bill of lading and container
	// number of records linked to it.
	fileName, docBOL, docContainer         string
	enumDefinition, textDefinition, option string
	// A custom field value of a shipment of the account: its id, the
	// shipment and the definition's slug.
	customField, fieldEntity, fieldSlug string
	// An email submission of the account.
	emailSubmission string
	// Reference data: a shipping line (id and SCAC) and a metro area (id
	// and UN/LOCODE).
	shippingLine, scac, metroArea, metroCode string
}

func findFixtures(t *testing.T, e *env) fixtures {
	t.Helper()
	return findFixturesOf(t, e, "acme")
}

// findFixturesOf finds the fixtures among the records of an account.
func findFixturesOf(t *testing.T, e *env, account string) fixtures {
	t.Helper()
	get := func(path string) map[string]any { return e.getAs(account+"/admin", path) }
	first := func(path string) string {
		data := get(path)["data"].([]any)
		if len(data) == 0 {
			t.Fatalf("GET %s: empty list", path)
		}
		return data[0].(map[string]any)["id"].(string)
	}
	var f fixtures
	ships := get("/v2/shipments?page[size]=100")["data"].([]any)
	for _, s := range ships {
		s := s.(map[string]any)
		id := s["id"].(string)
		rels := obj(s, "relationships")
		if f.shipment == "" && len(obj(rels, "containers")["data"].([]any)) > 1 {
			f.shipment = id
			f.bol = obj(s, "attributes")["bill_of_lading_number"].(string)
			f.terminal, _ = obj(rels, "pod_terminal", "data")["id"].(string)
			f.port, _ = obj(rels, "port_of_discharge", "data")["id"].(string)
			f.portCode, _ = obj(s, "attributes")["port_of_discharge_locode"].(string)
		}
		if d := obj(rels, "destination", "data"); f.metroShipment == "" && d != nil && d["type"] == "metro_area" {
			f.metroShipment = id
		}
		if d := obj(rels, "destination_terminal", "data"); f.railShipment == "" && d != nil && d["type"] == "rail_terminal" {
			f.railShipment = id
		}
	}
	for _, s := range ships {
		id := s.(map[string]any)["id"].(string)
		if len(get("/v2/shipments/" + id + "/custom_fields")["data"].([]any)) >= 3 {
			f.fieldsShipment = id
			break
		}
	}
	c := get("/v2/containers?page[size]=1")["data"].([]any)[0].(map[string]any)
	f.container = c["id"].(string)
	f.containerNumber = obj(c, "attributes")["number"].(string)
	f.document = first("/v2/documents?page[size]=1")
	docs := get("/v2/documents?page[size]=100&include=shipments,cargos")
	for _, d := range docs["data"].([]any) {
		rels := obj(d, "relationships")
		ships, cargos := obj(rels, "shipments")["data"].([]any), obj(rels, "cargos")["data"].([]any)
		if len(ships) > 0 && len(cargos) > 0 {
			f.fileName = obj(d, "attributes")["file_name"].(string)
			for _, inc := range docs["included"].([]any) {
				inc := inc.(map[string]any)
				switch inc["id"] {
				case ships[0].(map[string]any)["id"]:
					f.docBOL = obj(inc, "attributes")["bill_of_lading_number"].(string)
				case cargos[0].(map[string]any)["id"]:
					f.docContainer = obj(inc, "attributes")["number"].(string)
				}
			}
			break
		}
	}
	for _, d := range get("/v2/custom_field_definitions")["data"].([]any) {
		d := d.(map[string]any)
		attrs := obj(d, "attributes")
		if attrs["entity_type"] != "Shipment" {
			continue
		}
		switch attrs["api_slug"] {
		case "priority_level":
			f.enumDefinition = d["id"].(string)
		case "customer_po":
			f.textDefinition = d["id"].(string)
		}
	}
	f.option = first("/v2/custom_field_definitions/" + f.enumDefinition + "/options")
	cf := get("/v2/custom_fields?filter[entity_type]=Shipment&page[size]=1")["data"].([]any)[0]
	f.customField = cf.(map[string]any)["id"].(string)
	f.fieldEntity = obj(cf, "relationships", "entity", "data")["id"].(string)
	f.fieldSlug = obj(cf, "attributes")["api_slug"].(string)
	f.emailSubmission = first("/v2/email_submissions?page[size]=1")
	line := get("/v2/shipping_lines?page[size]=1")["data"].([]any)[0]
	f.shippingLine, f.scac = line.(map[string]any)["id"].(string), obj(line, "attributes")["scac"].(string)
	f.metroArea = obj(get("/v2/shipments/"+f.metroShipment), "data", "relationships", "destination", "data")["id"].(string)
	f.metroCode = obj(get("/v2/metro_areas/"+f.metroArea), "data", "attributes")["code"].(string)
	for name, v := range map[string]string{"shipment": f.shipment, "terminal": f.terminal, "port": f.port,
		"metro shipment": f.metroShipment, "rail shipment": f.railShipment, "fields shipment": f.fieldsShipment,
		"enum definition": f.enumDefinition, "text definition": f.textDefinition,
		"document file name": f.fileName, "document bill of lading": f.docBOL, "document container": f.docContainer} {
		if v == "" {
			t.Fatalf("the seeded data has no %s for the tests", name)
		}
	}
	return f
}

// TestGolden answers every read endpoint with a fixed body (golden file)
// that matches the endpoint's response schema in the OpenAPI document.
func TestGolden(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	q := url.QueryEscape
	cases := []struct{ name, path, schema string }{
		// Documents.
		{"documents", "/v2/documents?page[size]=4", "get-documents-200"},
		{"documents_default_page", "/v2/documents", "get-documents-200"},
		{"documents_page_2", "/v2/documents?page[number]=2&page[size]=4", "get-documents-200"},
		{"documents_include_all", "/v2/documents?page[size]=3&include=shipments,cargos,account,user,last_document_representation,email_submission", "get-documents-200"},
		{"documents_include_current_extraction", "/v2/documents?page[size]=2&include=current_extraction", "get-documents-200"},
		{"documents_include_empty", "/v2/documents?page[size]=1&include=", "get-documents-200"},
		{"documents_sort_document_type", "/v2/documents?sort=document_type&page[size]=4", "get-documents-200"},
		{"documents_sort_added_by_desc", "/v2/documents?sort=-added_by&page[size]=4", "get-documents-200"},
		{"documents_sort_created_at", "/v2/documents?sort=created_at&page[size]=4", "get-documents-200"},
		{"documents_filter_document_types", "/v2/documents?filter[document_types]=delivery_order,customs_entry&page[size]=3", "get-documents-200"},
		{"documents_filter_filename", "/v2/documents?filter[filename]=" + q(f.fileName), "get-documents-200"},
		{"documents_filter_reference", "/v2/documents?filter[reference]=" + q(f.docBOL) + "&include=shipments", "get-documents-200"},
		{"documents_filter_reference_container", "/v2/documents?filter[reference]=" + q(strings.ToLower(f.docContainer)), "get-documents-200"},
		{"documents_encoded_brackets", "/v2/documents?page%5Bsize%5D=2&page%5Bnumber%5D=3&filter%5Bdocument_types%5D=bill_of_lading", "get-documents-200"},
		{"documents_beyond_last_page", "/v2/documents?page[number]=999&page[size]=50", "get-documents-200"},
		{"document", "/v2/documents/" + f.document, "get-document-200"},
		{"document_include_all", "/v2/documents/" + f.document + "?include=shipments,cargos,account,user,current_extraction,email_submission", "get-document-200"},

		// Shipments.
		{"shipments", "/v2/shipments?page[size]=3", "get-shipments-200"},
		{"shipments_client_includes", "/v2/shipments?page[size]=3&include=containers,pod_terminal,port_of_lading,port_of_discharge,destination,destination_terminal", "get-shipments-200"},
		{"shipments_filter_tracking_stopped", "/v2/shipments?filter[tracking_stopped]=true&page[size]=2", "get-shipments-200"},
		{"shipments_number", "/v2/shipments?number=" + q(f.bol), "get-shipments-200"},
		{"shipments_q_container_number", "/v2/shipments?q=" + q(f.containerNumber), "get-shipments-200"},
		{"shipments_sort_pod_eta_at", "/v2/shipments?sort=pod_eta_at&page[size]=2", "get-shipments-200"},
		{"shipment", "/v2/shipments/" + f.shipment, "get-shipment-200"},
		{"shipment_include_all", "/v2/shipments/" + f.shipment + "?include=containers,pod_terminal,port_of_lading,port_of_discharge,destination,destination_terminal,line_tracking_stopped_by_user", "get-shipment-200"},
		{"shipment_metro_destination", "/v2/shipments/" + f.metroShipment + "?include=destination", "get-shipment-200"},
		{"shipment_rail_terminal", "/v2/shipments/" + f.railShipment + "?include=destination_terminal", "get-shipment-200"},

		// Containers.
		{"containers", "/v2/containers?page[size]=3", "get-containers-200"},
		{"containers_client_includes", "/v2/containers?page[size]=3&include=shipment,pod_terminal,pickup_facility", "get-containers-200"},
		{"containers_unsupported_includes", "/v2/containers?page[size]=1&include=transport_events,raw_events", "get-containers-200"},
		{"containers_filter_number", "/v2/containers?filter[number]=" + q(f.containerNumber), "get-containers-200"},
		{"container", "/v2/containers/" + f.container, "get-container-200"},
		{"container_include_all", "/v2/containers/" + f.container + "?include=shipment,pod_terminal,pickup_facility,transport_events,raw_events", "get-container-200"},

		// Reference data.
		{"terminal", "/v2/terminals/" + f.terminal, "get-terminal-200"},
		{"terminal_include_port", "/v2/terminals/" + f.terminal + "?include=port", "get-terminal-200"},
		{"port", "/v2/ports/" + f.port, "get-port-200"},
		{"port_by_locode", "/v2/ports/" + strings.ToLower(f.portCode), "get-port-200"},

		// Custom fields.
		{"custom_field_definitions", "/v2/custom_field_definitions", "get-custom-field-definitions-200"},
		{"custom_field_definitions_filter", "/v2/custom_field_definitions?filter[entity_type]=Shipment&filter[data_type]=enum_multi", "get-custom-field-definitions-200"},
		{"custom_field_definitions_display_name", "/v2/custom_field_definitions?filter[display_name]=dock", "get-custom-field-definitions-200"},
		{"custom_field_definition", "/v2/custom_field_definitions/" + f.enumDefinition, "get-custom-field-definition-200"},
		{"custom_field_options", "/v2/custom_field_definitions/" + f.enumDefinition + "/options", "get-custom-field-options-200"},
		{"custom_field_options_page", "/v2/custom_field_definitions/" + f.enumDefinition + "/options?page[size]=3&page[number]=2", "get-custom-field-options-200"},
		{"custom_field_options_not_enum", "/v2/custom_field_definitions/" + f.textDefinition + "/options", "get-custom-field-options-200"},
		{"custom_field_option", "/v2/custom_field_definitions/" + f.enumDefinition + "/options/" + f.option, "get-custom-field-option-200"},
		{"shipment_custom_fields", "/v2/shipments/" + f.fieldsShipment + "/custom_fields", "get-shipment-custom-fields-200"},
		{"container_custom_fields", "/v2/containers/" + f.container + "/custom_fields", "get-container-custom-fields-200"},

		// Reference data (issue 8).
		{"shipping_lines", "/v2/shipping_lines?page[size]=5", "get-shipping-lines-200"},
		{"shipping_lines_page_2", "/v2/shipping_lines?page[size]=5&page[number]=2", "get-shipping-lines-200"},
		{"shipping_line", "/v2/shipping_lines/" + f.shippingLine, "get-shipping-line-200"},
		{"shipping_line_by_scac", "/v2/shipping_lines/" + strings.ToLower(f.scac), "get-shipping-line-200"},
		{"metro_area", "/v2/metro_areas/" + f.metroArea, "get-metro-area-200"},
		// The OpenAPI document's /metro_areas/{id} takes "the un/locode or
		// the id"; the SDK's metroAreas.get passes either.
		{"metro_area_by_locode", "/v2/metro_areas/" + strings.ToLower(f.metroCode), "get-metro-area-200"},

		// Email submissions (issue 8).
		{"email_submissions", "/v2/email_submissions?page[size]=2", "get-email-submissions-200"},
		{"email_submissions_include_empty", "/v2/email_submissions?page[size]=2&include=", "get-email-submissions-200"},
		{"email_submissions_include_all", "/v2/email_submissions?page[size]=2&include=account,user,documents.last_document_representation", "get-email-submissions-200"},
		{"email_submission", "/v2/email_submissions/" + f.emailSubmission, "get-email-submission-200"},
		{"email_submission_include_documents", "/v2/email_submissions/" + f.emailSubmission + "?include=documents", "get-email-submission-200"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("acme/member", "GET", c.path, nil)
			wantDocument(t, r, http.StatusOK, c.schema)
			golden(t, c.name, r)
		})
	}
}

// checkDocument checks the JSON:API rules the schemas do not express:
// included resources appear once, never repeat primary data, and each is
// reachable from a relationship; every relationship has data; links are
// absolute.
func checkDocument(t *testing.T, r *response) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/vnd.api+json" {
		t.Errorf("Content-Type %q", ct)
	}
	doc := r.json(t)
	primary := primaryData(doc)
	key := func(m map[string]any) string { return m["type"].(string) + "/" + m["id"].(string) }
	seen := map[string]bool{}
	for _, p := range primary {
		seen[key(p)] = true
	}
	included, _ := doc["included"].([]any)
	all := append([]map[string]any(nil), primary...)
	for _, x := range included {
		m := x.(map[string]any)
		if seen[key(m)] {
			t.Errorf("included %s twice or repeats primary data", key(m))
		}
		seen[key(m)] = true
		all = append(all, m)
	}
	linked := map[string]bool{}
	for _, res := range all {
		for name, rel := range obj(res, "relationships") {
			data, ok := rel.(map[string]any)["data"]
			if !ok {
				t.Errorf("%s: relationship %s has no data", key(res), name)
			}
			switch d := data.(type) {
			case map[string]any:
				linked[key(d)] = true
			case []any:
				for _, x := range d {
					linked[key(x.(map[string]any))] = true
				}
			}
		}
		for name, l := range obj(res, "links") {
			if s, _ := l.(string); !strings.HasPrefix(s, "https://api.shipgraph.test/v2/") {
				t.Errorf("%s: link %s %q is not absolute", key(res), name, l)
			}
		}
	}
	for _, x := range included {
		if k := key(x.(map[string]any)); !linked[k] {
			t.Errorf("included %s is not reachable from a relationship", k)
		}
	}
	if q := doc["links"]; q != nil {
		for name, l := range q.(map[string]any) {
			if s, _ := l.(string); !strings.HasPrefix(s, "https://api.shipgraph.test/v2/") {
				t.Errorf("top-level link %s %q is not absolute", name, l)
			}
		}
	}
}

// TestSameValuesAsGraphQL reads the same records through /v2 and GraphQL
// and compares every attribute: one set of resolvers, one set of values.
// Only the spelling differs: snake_case and lower-case enum values in
// /v2, camelCase and UPPER_SNAKE enum names in GraphQL.
func TestSameValuesAsGraphQL(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findFixtures(t, e)
	// Pick records with as many attributes set as possible.
	container := f.container
	for _, c := range e.get("/v2/containers?page[size]=100")["data"].([]any) {
		a := obj(c, "attributes")
		if len(a["holds_at_pod_terminal"].([]any)) > 0 && len(a["fees_at_pod_terminal"].([]any)) > 0 && a["import_deadlines"] != nil {
			container = c.(map[string]any)["id"].(string)
			break
		}
	}
	cases := []struct {
		name, rest, query string
		partial           bool // the query selects some attributes only
	}{
		{"shipment", "/v2/shipments/" + f.shipment, `query($id: ID!) { record: shipment(id: $id) {
			id billOfLadingNumber normalizedNumber refNumbers createdAt tags
			portOfLadingLocode portOfLadingName portOfDischargeLocode portOfDischargeName destinationLocode destinationName
			shippingLineScac shippingLineName shippingLineShortName customerName podVesselName podVesselImo podVoyageNumber
			polEtdAt polAtdAt podEtaAt podOriginalEtaAt podAtaAt destinationEtaAt destinationAtaAt
			polTimezone podTimezone destinationTimezone lineTrackingLastAttemptedAt lineTrackingLastSucceededAt
			lineTrackingStoppedAt lineTrackingStoppedReason
			containers { id } portOfLading { id } portOfDischarge { id } podTerminal { id }
			destination { ... on Port { id } ... on MetroArea { id } }
			destinationTerminal { ... on Terminal { id } ... on RailTerminal { id } }
			lineTrackingStoppedByUser { id } } }`, false},
		{"stopped shipment", "/v2/shipments/" + e.firstID("/v2/shipments?filter[tracking_stopped]=true"), `query($id: ID!) { record: shipment(id: $id) {
			id billOfLadingNumber lineTrackingStoppedAt lineTrackingStoppedReason lineTrackingStoppedByUser { id } } }`, true},
		{"container", "/v2/containers/" + container, `query($id: ID!) { record: container(id: $id) {
			id number refNumbers equipmentType equipmentLength equipmentHeight weightInLbs createdAt sealNumber
			pickupLfd pickupAppointmentAt availabilityKnown availableForPickup podArrivedAt podDischargedAt podFullOutAt
			terminalCheckedAt podFullOutChassisNumber locationAtPodTerminal finalDestinationFullOutAt emptyTerminatedAt
			holdsAtPodTerminal { name status description } feesAtPodTerminal { type amount currencyCode }
			podTimezone finalDestinationTimezone emptyTerminatedTimezone podRailCarrierScac indRailCarrierScac
			podLastTrackingRequestAt shipmentLastTrackingRequestAt podRailLoadedAt podRailDepartedAt
			indEtaAt indAtaAt indRailUnloadedAt indFacilityLfdOn
			importDeadlines { pickupLfdTerminal pickupLfdRail pickupLfdLine } currentStatus
			shipment { id } podTerminal { id } pickupFacility { id } } }`, false},
		{"document", "/v2/documents/" + f.document, `query($id: ID!) { record: document(id: $id) {
			id name documentType documentTypeManual classificationNotes source fileName fileContentType fileSizeBytes
			createdAt updatedAt account { id } user { id } emailSubmission { id } lastDocumentRepresentation { id }
			shipments { id } cargos { id } } }`, false},
		{"terminal", "/v2/terminals/" + f.terminal, `query($id: ID!) { record: terminal(id: $id) {
			id name nickname firmsCode smdgCode bicFacilityCode street city state stateAbbr zip country port { id } } }`, false},
		{"port", "/v2/ports/" + f.port, `query($id: ID!) { record: port(id: $id) {
			id name code stateAbbr city countryCode timeZone latitude longitude } }`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := e.get(c.rest)["data"].(map[string]any)
			id := res["id"].(string)
			r := e.do("acme/admin", "POST", "/graphql", map[string]any{"query": c.query, "variables": map[string]any{"id": id}},
				"Content-Type", "application/json")
			if r.status != http.StatusOK {
				t.Fatalf("graphql: %d\n%s", r.status, r.body)
			}
			var gql struct {
				Data   map[string]map[string]any `json:"data"`
				Errors []any                     `json:"errors"`
			}
			if err := json.Unmarshal(r.body, &gql); err != nil || len(gql.Errors) > 0 || gql.Data["record"] == nil {
				t.Fatalf("graphql: %v\n%s", err, r.body)
			}
			record := gql.Data["record"]
			compared := 0
			for name, v := range obj(res, "attributes") {
				g, ok := record[camel(name)]
				if !ok {
					if c.partial {
						continue
					}
					t.Errorf("%s: no GraphQL field %s", name, camel(name))
					continue
				}
				if !same(v, g) {
					t.Errorf("%s: /v2 %v, GraphQL %v", name, v, g)
				}
				compared++
			}
			// Linkage: the same related records.
			for name, rel := range obj(res, "relationships") {
				// transport_events and raw_events have no GraphQL field.
				if g, ok := record[camel(name)]; ok {
					if !sameLinkage(rel.(map[string]any)["data"], g) {
						t.Errorf("relationship %s: /v2 %v, GraphQL %v", name, rel, g)
					}
					compared++
				}
			}
			if compared < 3 {
				t.Errorf("only %d values compared", compared)
			}
		})
	}
}

// camel turns snake_case into camelCase.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = string(unicode.ToUpper(rune(parts[i][0]))) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// same compares a /v2 value with a GraphQL one.
func same(v, g any) bool {
	switch v := v.(type) {
	case string:
		gs, ok := g.(string)
		if !ok {
			return false
		}
		if v == gs {
			return true
		}
		// Timestamps: the same instant.
		if tv, err := time.Parse(time.RFC3339Nano, v); err == nil {
			tg, err := time.Parse(time.RFC3339Nano, gs)
			return err == nil && tv.Equal(tg)
		}
		// Enums: "open top" is OPEN_TOP.
		return strings.ToUpper(strings.NewReplacer(" ", "_", "-", "_").Replace(v)) == gs
	case map[string]any:
		gm, ok := g.(map[string]any)
		if !ok || len(gm) != len(v) {
			return false
		}
		for k, x := range v {
			if !same(x, gm[camel(k)]) {
				return false
			}
		}
		return true
	case []any:
		gl, ok := g.([]any)
		if !ok || len(gl) != len(v) {
			return false
		}
		for i := range v {
			if !same(v[i], gl[i]) {
				return false
			}
		}
		return true
	}
	return fmt.Sprint(v) == fmt.Sprint(g)
}

// sameLinkage compares relationship data with the ids GraphQL returned.
func sameLinkage(data, g any) bool {
	switch d := data.(type) {
	case nil:
		return g == nil
	case map[string]any:
		gm, ok := g.(map[string]any)
		return ok && gm["id"] == d["id"]
	case []any:
		gl, ok := g.([]any)
		if !ok || len(gl) != len(d) {
			return false
		}
		for i := range d {
			if d[i].(map[string]any)["id"] != gl[i].(map[string]any)["id"] {
				return false
			}
		}
		return true
	}
	return false
}
