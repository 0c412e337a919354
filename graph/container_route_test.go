package graph_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"shipgraph/testkit"
)

// TestContainerRouteAndMapGraphQL: containerRoute and containerMap answer
// what /v2/containers/{id}/route and /map_geojson answer for the same
// container (the map byte for byte as JSON), null for another account's
// container.
func TestContainerRouteAndMapGraphQL(t *testing.T) {
	t.Parallel()
	e, f := newWriteFixture(t)
	k := e.Key(t, acmeViewer)
	var box, theirs string
	// A container whose events name at least two ports: a route with legs.
	e.SQL(t, &box, `SELECT c.id FROM containers c JOIN transport_events te ON te.account_id = c.account_id AND te.container_id = c.id
		WHERE c.account_id = $1 AND te.port_id IS NOT NULL GROUP BY c.id HAVING count(DISTINCT te.port_id) >= 2 ORDER BY c.id LIMIT 1`, f.acme)
	e.SQL(t, &theirs, `SELECT id FROM containers WHERE account_id = $1 ORDER BY id LIMIT 1`, f.globex)

	var got struct {
		ContainerRoute *struct {
			ID, ContainerID string
			Locations       []struct {
				ID            string
				Port          struct{ ID, Name string }
				InboundMode   *string
				OutboundMode  *string
				InboundVessel *struct{ ID string }
			}
		}
		ContainerMap json.RawMessage
	}
	// In one operation, whose port { id name } must not narrow the ports
	// the map reads.
	e.Must(t, k, `query($id: ID!) { containerRoute(id: $id) { id containerId locations { id port { id name } inboundMode outboundMode inboundVessel { id } } }
		containerMap(id: $id) }`, testkit.Vars{"id": box}, &got)
	if got.ContainerRoute == nil || got.ContainerRoute.ContainerID != box || len(got.ContainerRoute.Locations) < 2 {
		t.Fatalf("containerRoute: %+v", got.ContainerRoute)
	}

	get := func(path string) []byte {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(e.URL(), "/graphql")+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Token "+k)
		r := e.HTTP(t, req)
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		return r.Body
	}
	var v2 struct {
		Data struct {
			ID            string
			Relationships struct {
				RouteLocations struct{ Data []struct{ ID string } } `json:"route_locations"`
			}
		}
	}
	if err := json.Unmarshal(get("/v2/containers/"+box+"/route"), &v2); err != nil {
		t.Fatal(err)
	}
	if v2.Data.ID != got.ContainerRoute.ID || len(v2.Data.Relationships.RouteLocations.Data) != len(got.ContainerRoute.Locations) {
		t.Fatalf("/v2 route %+v, GraphQL %+v", v2.Data, got.ContainerRoute)
	}
	for i, l := range v2.Data.Relationships.RouteLocations.Data {
		if l.ID != got.ContainerRoute.Locations[i].ID || got.ContainerRoute.Locations[i].Port.ID == "" {
			t.Errorf("call %d: /v2 %s, GraphQL %+v", i, l.ID, got.ContainerRoute.Locations[i])
		}
	}
	var a, b any
	if err := json.Unmarshal(get("/v2/containers/"+box+"/map_geojson"), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got.ContainerMap, &b); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) || !strings.Contains(string(jb), `"FeatureCollection"`) || !strings.Contains(string(jb), `"feature_type":"port"`) {
		t.Errorf("containerMap differs from /v2 map_geojson:\n%s\n%s", jb, ja)
	}

	var none struct {
		ContainerRoute *struct{ ID string }
		ContainerMap   json.RawMessage
	}
	e.Must(t, k, `query($id: ID!) { containerRoute(id: $id) { id } containerMap(id: $id) }`, testkit.Vars{"id": theirs}, &none)
	if none.ContainerRoute != nil || string(none.ContainerMap) != "null" {
		t.Errorf("another account's container: %+v %s", none.ContainerRoute, none.ContainerMap)
	}
}

// TestUpdateContainerAndPartyGraphQL: updateContainer sets and clears a
// container's refNumbers, updateParty renames a party, by the /v2 rules:
// BAD_USER_INPUT with the field, FORBIDDEN for a viewer, NOT_FOUND for
// another account's record.
func TestUpdateContainerAndPartyGraphQL(t *testing.T) {
	t.Parallel()
	e, f := newWriteFixture(t)
	k := e.Key(t, acmeMember)
	box := e.Text(t, `SELECT id FROM containers WHERE account_id = $1 ORDER BY id LIMIT 1`, f.acme)
	theirs := e.Text(t, `SELECT id FROM containers WHERE account_id = $1 ORDER BY id LIMIT 1`, f.globex)

	var up struct {
		UpdateContainer struct {
			ID         string
			RefNumbers []string
		}
	}
	const updateContainer = `mutation($id: ID!, $in: ContainerPatch!) { updateContainer(id: $id, input: $in) { id refNumbers } }`
	e.Must(t, k, updateContainer, testkit.Vars{"id": box, "in": testkit.Vars{"refNumbers": []string{"PO-1", " PO-2", "PO-1"}}}, &up)
	if c := up.UpdateContainer; c.ID != box || strings.Join(c.RefNumbers, ",") != "PO-1,PO-2" {
		t.Errorf("updateContainer: %+v", c)
	}
	e.Must(t, k, updateContainer, testkit.Vars{"id": box, "in": testkit.Vars{"refNumbers": nil}}, &up)
	if c := up.UpdateContainer; len(c.RefNumbers) != 0 {
		t.Errorf("cleared: %+v", c)
	}
	check := func(key, query string, vars testkit.Vars, code, field string) {
		t.Helper()
		res := e.Do(t, key, query, vars)
		if len(res.Errors) != 1 || res.Errors[0].Code() != code || field != "" && res.Errors[0].Extensions["field"] != field {
			t.Errorf("%s %v: %s", query, vars, res)
		}
	}
	check(k, updateContainer, testkit.Vars{"id": box, "in": testkit.Vars{"refNumbers": []string{"A\u202eB"}}}, "BAD_USER_INPUT", "ref_numbers")
	check(e.Key(t, acmeViewer), updateContainer, testkit.Vars{"id": box, "in": testkit.Vars{"refNumbers": []string{"V"}}}, "FORBIDDEN", "")
	check(k, updateContainer, testkit.Vars{"id": theirs, "in": testkit.Vars{"refNumbers": []string{"X"}}}, "NOT_FOUND", "")

	var created struct{ CreateParty struct{ ID string } }
	e.Must(t, k, `mutation { createParty(input: {companyName: "Sodor Steamworks"}) { id } }`, nil, &created)
	e.Must(t, k, `mutation { createParty(input: {companyName: "Knapford Freight"}) { id } }`, nil, nil)
	var theirParty struct{ CreateParty struct{ ID string } }
	e.Must(t, e.Key(t, globexAdmin), `mutation { createParty(input: {companyName: "Globex Party"}) { id } }`, nil, &theirParty)
	const updateParty = `mutation($id: ID!, $name: String!) { updateParty(id: $id, input: {companyName: $name}) { id companyName } }`
	var renamed struct {
		UpdateParty struct{ ID, CompanyName string }
	}
	e.Must(t, k, updateParty, testkit.Vars{"id": created.CreateParty.ID, "name": " Sodor Steam Works "}, &renamed)
	if renamed.UpdateParty.CompanyName != "Sodor Steam Works" {
		t.Errorf("updateParty: %+v", renamed.UpdateParty)
	}
	check(k, updateParty, testkit.Vars{"id": created.CreateParty.ID, "name": "knapford freight"}, "CONFLICT", "company_name")
	check(k, updateParty, testkit.Vars{"id": created.CreateParty.ID, "name": " "}, "BAD_USER_INPUT", "company_name")
	check(k, updateParty, testkit.Vars{"id": created.CreateParty.ID, "name": "Acme \ufffd"}, "BAD_USER_INPUT", "company_name")
	check(e.Key(t, acmeViewer), updateParty, testkit.Vars{"id": created.CreateParty.ID, "name": "Viewer"}, "FORBIDDEN", "")
	check(k, updateParty, testkit.Vars{"id": theirParty.CreateParty.ID, "name": "Mine"}, "NOT_FOUND", "")
}
