package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode"
)

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
