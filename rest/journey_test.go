package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// journeyFixtures are records of the seeded journeys, found through the
// API: a container of acme with transport events and a vessel, one whose
// vessel is at sea, and a container of globex.
type journeyFixtures struct {
	container, seaContainer, vessel, imo, otherContainer string
}

func findJourney(t *testing.T, e *env) journeyFixtures {
	t.Helper()
	var f journeyFixtures
	list := e.get("/v2/containers?page[size]=100")["data"].([]any)
	for _, c := range list {
		id := c.(map[string]any)["id"].(string)
		if len(obj(c, "relationships", "transport_events")["data"].([]any)) == 0 {
			t.Fatalf("container %s has no transport events linkage", id)
		}
		m := e.get("/v2/containers/" + id + "/map_geojson")
		for _, ft := range m["features"].([]any) {
			if obj(ft, "properties")["feature_type"] == "current_vessel" && f.seaContainer == "" {
				f.seaContainer = id
			}
		}
		if f.container == "" {
			doc := e.get("/v2/containers/" + id + "/transport_events?include=vessel")
			for _, inc := range doc["included"].([]any) {
				if inc.(map[string]any)["type"] == "vessel" {
					f.container, f.vessel = id, inc.(map[string]any)["id"].(string)
					f.imo, _ = obj(inc, "attributes")["imo"].(string)
					break
				}
			}
		}
	}
	f.otherContainer = obj(e.getAs("globex/admin", "/v2/containers?page[size]=1")["data"].([]any)[0])["id"].(string)
	if f.container == "" || f.seaContainer == "" || f.imo == "" {
		t.Fatalf("the seed has no journey fixtures: %+v", f)
	}
	return f
}

// TestJourneyGolden answers the journey paths with fixed bodies valid
// against the OpenAPI document's schemas (the route, which it lacks, is
// checked as a JSON:API document).
func TestJourneyGolden(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findJourney(t, e)
	cases := []struct{ name, path, schema string }{
		{"container_transport_events", "/v2/containers/" + f.container + "/transport_events", "get-container-transport-events-200"},
		{"container_transport_events_include", "/v2/containers/" + f.container + "/transport_events?include=location,terminal,vessel,shipment", "get-container-transport-events-200"},
		{"container_transport_events_page", "/v2/containers/" + f.container + "/transport_events?page[size]=2&page[number]=2", "get-container-transport-events-200"},
		{"container_raw_events", "/v2/containers/" + f.container + "/raw_events", "get-container-raw-events-200"},
		{"container_raw_events_include", "/v2/containers/" + f.container + "/raw_events?include=location,vessel", "get-container-raw-events-200"},
		{"container_include_transport_events", "/v2/containers/" + f.container + "?include=transport_events", "get-container-200"},
		{"container_map_geojson", "/v2/containers/" + f.seaContainer + "/map_geojson", "get-container-map-geojson-200"},
		{"container_route", "/v2/containers/" + f.seaContainer + "/route?include=port,vessel,route_location", ""},
		{"vessel", "/v2/vessels/" + f.vessel, "get-vessel-200"},
		{"vessel_by_imo", "/v2/vessels/" + f.imo, "get-vessel-by-imo-200"},
		{"vessel_future_positions", "/v2/vessels/" + f.vessel + "/future_positions", "get-vessel-future-positions-200"},
		{"vessel_future_positions_with_coordinates", "/v2/vessels/" + f.vessel + "/future_positions_with_coordinates?latitude=1.5&longitude=104.25", "get-vessel-future-positions-with-coordinates-200"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("acme/member", "GET", c.path, nil)
			if r.status != http.StatusOK {
				t.Fatalf("GET %s: %d\n%s", c.path, r.status, r.body)
			}
			if !strings.Contains(c.path, "map_geojson") {
				checkDocument(t, r)
			}
			if c.schema != "" {
				validate(t, c.schema, r.body)
			}
			var replace []string
			if strings.Contains(c.path, "with_coordinates") {
				// The given position is now's.
				first := obj(r.json(t), "data", "attributes")["positions"].([]any)[0]
				replace = []string{first.(map[string]any)["timestamp"].(string), "<now>"}
			}
			golden(t, c.name, r, replace...)
		})
	}
}

// TestJourneyMaps: every container's map is a FeatureCollection whose
// geometries are Points and LineStrings of [longitude, latitude] pairs,
// its ports at their own coordinates in route order, and valid against
// the OpenAPI schema.
func TestJourneyMaps(t *testing.T) {
	e := newEnv(t, envOptions{})
	ports := map[string][2]float64{}
	for _, c := range e.get("/v2/containers?page[size]=40")["data"].([]any) {
		id := c.(map[string]any)["id"].(string)
		r := e.do("acme/admin", "GET", "/v2/containers/"+id+"/map_geojson", nil)
		if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("map of %s: %d %s\n%s", id, r.status, r.header.Get("Content-Type"), r.body)
		}
		validate(t, "get-container-map-geojson-200", r.body)
		var fc struct {
			Type     string
			Features []struct {
				Type     string
				Geometry struct {
					Type        string
					Coordinates json.RawMessage
				}
				Properties map[string]any
			}
		}
		if err := json.Unmarshal(r.body, &fc); err != nil || fc.Type != "FeatureCollection" {
			t.Fatalf("map of %s: %v %s", id, err, r.body)
		}
		seq := 0
		for _, ft := range fc.Features {
			var pts [][2]float64
			switch ft.Geometry.Type {
			case "Point":
				var p [2]float64
				if err := json.Unmarshal(ft.Geometry.Coordinates, &p); err != nil {
					t.Fatal(err)
				}
				pts = append(pts, p)
			case "LineString":
				if err := json.Unmarshal(ft.Geometry.Coordinates, &pts); err != nil || len(pts) < 2 {
					t.Fatalf("line %s: %v", ft.Geometry.Coordinates, err)
				}
			default:
				t.Fatalf("geometry %q", ft.Geometry.Type)
			}
			for _, p := range pts {
				if p[0] < -180 || p[0] > 180 || p[1] < -90 || p[1] > 90 {
					t.Errorf("%s: coordinates %v out of range", id, p)
				}
			}
			if ft.Properties["feature_type"] == "port" {
				seq++
				if int(ft.Properties["ports_sequence"].(float64)) != seq {
					t.Errorf("%s: port %v out of order", id, ft.Properties["ports_sequence"])
				}
				ports[ft.Properties["location_id"].(string)] = pts[0]
			}
		}
		if seq < 2 {
			t.Errorf("%s: %d ports on the map", id, seq)
		}
	}
	// The ports' Points are [longitude, latitude] of the port records.
	for id, p := range ports {
		a := obj(e.get("/v2/ports/"+id), "data", "attributes")
		if a["longitude"].(float64) != p[0] || a["latitude"].(float64) != p[1] {
			t.Errorf("port %s at %v, record at [%v, %v]", id, p, a["longitude"], a["latitude"])
		}
	}
}

// TestJourneyTenancy: another account's container is not found on every
// journey path, with or without includes; no key is 401; malformed ids are
// 404, never a 5xx.
func TestJourneyTenancy(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findJourney(t, e)
	paths := []string{"/transport_events", "/transport_events?include=location,vessel", "/raw_events", "/route", "/map_geojson"}
	for _, p := range paths {
		for _, id := range []string{f.otherContainer, "not-a-uuid", "00000000-0000-0000-0000-000000000000", strings.ToUpper(f.otherContainer)} {
			wantError(t, e.do("acme/admin", "GET", "/v2/containers/"+id+p, nil), http.StatusNotFound, "", "")
		}
		wantError(t, e.do("", "GET", "/v2/containers/"+f.container+p, nil), http.StatusUnauthorized, "", "")
		if r := e.do("globex/admin", "GET", "/v2/containers/"+f.otherContainer+p, nil); r.status != http.StatusOK {
			t.Errorf("globex's own container %s: %d", p, r.status)
		}
	}
	// acme's events are not linked from globex's side, nor included.
	doc := e.getAs("globex/admin", "/v2/containers/"+f.otherContainer+"?include=transport_events,raw_events")
	acme := e.get("/v2/containers/" + f.container + "/transport_events")
	for _, ev := range acme["data"].([]any) {
		if strings.Contains(fmt.Sprint(doc), ev.(map[string]any)["id"].(string)) {
			t.Errorf("acme's event %v in globex's container", ev)
		}
	}
	for _, p := range []string{"/v2/vessels/", "/v2/vessels/%s/future_positions", "/v2/vessels/%s/future_positions_with_coordinates?latitude=1&longitude=2"} {
		for _, id := range []string{"nope", "1234567", "00000000-0000-0000-0000-000000000000", "12345678"} {
			path := p + id
			if strings.Contains(p, "%s") {
				path = fmt.Sprintf(p, id)
			}
			wantError(t, e.do("acme/admin", "GET", path, nil), http.StatusNotFound, "", "")
		}
		path := p + f.vessel
		if strings.Contains(p, "%s") {
			path = fmt.Sprintf(p, f.vessel)
		}
		wantError(t, e.do("", "GET", path, nil), http.StatusUnauthorized, "", "")
	}
	// Coordinates are required and checked.
	for _, q := range []string{"", "?latitude=1", "?latitude=91&longitude=0", "?latitude=x&longitude=0"} {
		r := e.do("acme/admin", "GET", "/v2/vessels/"+f.vessel+"/future_positions_with_coordinates"+q, nil)
		if r.status != http.StatusBadRequest {
			t.Errorf("coordinates %q: %d\n%s", q, r.status, r.body)
		}
	}
	// A vessel is the same by id and IMO, to every account.
	byID := e.getAs("globex/viewer", "/v2/vessels/"+f.vessel)
	byIMO := e.get("/v2/vessels/" + f.imo)
	if obj(byID, "data")["id"] != obj(byIMO, "data")["id"] {
		t.Errorf("vessel by id %v, by IMO %v", obj(byID, "data")["id"], obj(byIMO, "data")["id"])
	}
}

// TestJourneyStatements: the journey reads cost a fixed number of
// statements whatever the number of events, and includes batch.
func TestJourneyStatements(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findJourney(t, e)
	for _, c := range []struct {
		path string
		want int64
	}{
		// container, events.
		{"/v2/containers/" + f.container + "/transport_events", 2},
		{"/v2/containers/" + f.container + "/raw_events", 2},
		// … ports, terminals, vessels, shipments and their containers
		// linkage (reference data may come from the cache).
		{"/v2/containers/" + f.container + "/transport_events?include=location,terminal,vessel,shipment", 7},
		// container, events, ports and vessels.
		{"/v2/containers/" + f.container + "/route", 4},
		{"/v2/containers/" + f.container + "/map_geojson", 4},
		{"/v2/vessels/" + f.imo, 1},
	} {
		r := e.do("acme/admin", "GET", c.path, nil)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d", c.path, r.status)
		}
		if r.queries > c.want {
			t.Errorf("%s: %d statements, want at most %d", c.path, r.queries, c.want)
		}
	}
	// A page of containers with their events included: the same
	// statements for 5 and for 50.
	small := e.do("acme/admin", "GET", "/v2/containers?page[size]=5&include=transport_events,raw_events", nil)
	large := e.do("acme/admin", "GET", "/v2/containers?page[size]=50&include=transport_events,raw_events", nil)
	if small.status != http.StatusOK || small.queries != large.queries {
		t.Errorf("containers with events: %d statements for 5, %d for 50", small.queries, large.queries)
	}
}

// TestJourneyHeldLinkage: the linkage a container page carries in its own
// statement names the events the events endpoints read, in their order,
// for every container of the page (the list, a container alone, and
// containers included by a shipment).
func TestJourneyHeldLinkage(t *testing.T) {
	e := newEnv(t, envOptions{})
	pages := map[string]any{}
	for _, c := range e.get("/v2/containers?page[size]=100")["data"].([]any) {
		pages[c.(map[string]any)["id"].(string)] = c
	}
	for _, c := range e.get("/v2/shipments?page[size]=100&include=containers")["included"].([]any) {
		if c.(map[string]any)["type"] == "container" {
			pages["included "+c.(map[string]any)["id"].(string)] = c
		}
	}
	if len(pages) < 2 {
		t.Fatalf("the seed gives %d containers", len(pages))
	}
	for key, c := range pages {
		id := c.(map[string]any)["id"].(string)
		one := e.get("/v2/containers/" + id)["data"]
		for _, rel := range []string{"transport_events", "raw_events"} {
			want := resourceIDs(e.get("/v2/containers/" + id + "/" + rel)["data"].([]any))
			for what, got := range map[string][]string{
				key: resourceIDs(obj(c, "relationships", rel)["data"].([]any)), "alone": resourceIDs(obj(one, "relationships", rel)["data"].([]any)),
			} {
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("container %s (%s) %s linkage %v, the events read %v", id, what, rel, got, want)
				}
			}
		}
	}
}

// TestJourneyEventFieldsets: fields[transport_event] and fields[raw_event]
// name the types their endpoints return: each resource shows only the
// fields named; a name the type lacks is still a 400.
func TestJourneyEventFieldsets(t *testing.T) {
	e := newEnv(t, envOptions{})
	f := findJourney(t, e)
	for _, tc := range []struct{ path, typ, field string }{
		{"/v2/containers/" + f.container + "/transport_events?fields[transport_event]=event", "transport_event", "event"},
		{"/v2/containers/" + f.container + "/raw_events?fields[raw_event]=event", "raw_event", "event"},
	} {
		r := e.do("acme/admin", "GET", tc.path, nil)
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.path, r.status, r.body)
		}
		var doc struct {
			Data []struct {
				Type          string
				Attributes    map[string]any
				Relationships map[string]any
			}
		}
		if err := json.Unmarshal(r.body, &doc); err != nil || len(doc.Data) == 0 {
			t.Fatalf("%s: %v %s", tc.path, err, r.body)
		}
		for _, d := range doc.Data {
			if _, ok := d.Attributes[tc.field]; d.Type != tc.typ || !ok || len(d.Attributes) != 1 || len(d.Relationships) != 0 {
				t.Fatalf("%s: %s with attributes %v, relationships %v", tc.path, d.Type, d.Attributes, d.Relationships)
			}
		}
		bad := e.do("acme/admin", "GET", strings.Replace(tc.path, "="+tc.field, "=nope", 1), nil)
		if bad.status != http.StatusBadRequest {
			t.Errorf("an unknown field of %s: %d", tc.typ, bad.status)
		}
	}
}

// TestShipmentHeldContainerLinkage: the containers linkage a shipment
// carries in its own statement (a shipment page, shipments included by
// documents and by containers) names the containers that including them
// reads, in that order.
func TestShipmentHeldContainerLinkage(t *testing.T) {
	e := newEnv(t, envOptions{})
	shipments := map[string]any{}
	for _, s := range e.get("/v2/shipments?page[size]=100")["data"].([]any) {
		shipments["page "+s.(map[string]any)["id"].(string)] = s
	}
	for _, path := range []string{"/v2/documents?page[size]=100&include=shipments", "/v2/containers?page[size]=100&include=shipment"} {
		for _, s := range e.get(path)["included"].([]any) {
			if s.(map[string]any)["type"] == "shipment" {
				shipments[path+" "+s.(map[string]any)["id"].(string)] = s
			}
		}
	}
	withContainers := 0
	for key, s := range shipments {
		id := s.(map[string]any)["id"].(string)
		whole := e.get("/v2/shipments/" + id + "?include=containers")
		want := resourceIDs(obj(whole["data"], "relationships", "containers")["data"].([]any))
		var included []string
		for _, c := range whole["included"].([]any) {
			if c.(map[string]any)["type"] == "container" {
				included = append(included, c.(map[string]any)["id"].(string))
			}
		}
		got := resourceIDs(obj(s, "relationships", "containers")["data"].([]any))
		if strings.Join(got, ",") != strings.Join(want, ",") || len(included) != len(want) {
			t.Errorf("shipment %s: containers linkage %v, with the containers read %v (%d included)", key, got, want, len(included))
		}
		if len(got) > 0 {
			withContainers++
		}
	}
	if len(shipments) < 3 || withContainers == 0 {
		t.Fatalf("the seed gives %d shipments, %d with containers", len(shipments), withContainers)
	}
}

// resourceIDs returns the ids of a document's resource objects (or linkage
// identifiers), in order.
func resourceIDs(list []any) []string {
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = x.(map[string]any)["id"].(string)
	}
	return out
}
