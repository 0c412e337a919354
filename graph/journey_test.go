package graph_test

import (
	"slices"
	"testing"

	"shipgraph/testkit"
)

const journeyQuery = `query($first: Int) { containers(first: $first) { nodes {
	id
	transportEvents { id event timestamp timezone locationLocode voyageNumber dataSource createdAt
		location { typename: __typename ... on Port { id code } } terminal { __typename } container { id } shipment { id }
		vessel { id name imo latitude longitude } }
	rawEvents { id event originalEvent estimated timestamp locationName position location { id code } vessel { id imo } }
} } }`

type journeyPage struct {
	Containers struct {
		Nodes []struct {
			ID              string
			TransportEvents []struct {
				ID, Event  string
				DataSource string
				Location   *struct{ Typename, ID, Code string }
				Container  struct{ ID string }
				Vessel     *struct{ ID, Name, IMO string }
			}
			RawEvents []struct {
				ID       string
				Position int
				Vessel   *struct{ ID, IMO string }
			}
		}
	}
}

// testJourneyStatements: a page of containers with their transport and raw
// events, each event's location, terminal and vessel, costs the same
// statements for 10 and for 100 containers (one per relationship and
// level).
func testJourneyStatements(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	e.Must(t, k, journeyQuery, testkit.Vars{"first": 100}, nil)
	var counts []int64
	for _, first := range []int{10, 100} {
		var d journeyPage
		res := e.Must(t, k, journeyQuery, testkit.Vars{"first": first}, &d)
		if len(d.Containers.Nodes) != first {
			t.Fatalf("first %d: %d containers", first, len(d.Containers.Nodes))
		}
		counts = append(counts, res.Statements)
	}
	t.Logf("statements: first 10: %d, first 100: %d", counts[0], counts[1])
	// page, count?, transport events, raw events, ports, terminals,
	// containers, shipments, vessels (rail terminals read nothing).
	if counts[0] != counts[1] || counts[1] > 10 {
		t.Errorf("journey page: %v statements for 10 and 100 containers", counts)
	}
}

// testJourney: every container's events are its own, in time order, as the
// tables hold them; vessels answer by id and by IMO number; another
// account's vessel events are not a container's.
func testJourney(t *testing.T, e *testkit.Env) {
	k := e.Key(t, acmeAdmin)
	var d journeyPage
	e.Must(t, k, journeyQuery, testkit.Vars{"first": 30}, &d)
	var vesselID, imo string
	for _, c := range d.Containers.Nodes {
		var want []string
		e.SQL(t, &want, `SELECT id::text FROM transport_events WHERE container_id = $1
			ORDER BY event_at NULLS LAST, created_at, id`, c.ID)
		var got []string
		for _, ev := range c.TransportEvents {
			got = append(got, ev.ID)
			if ev.Container.ID != c.ID || ev.Location == nil || ev.Location.Typename != "Port" || ev.DataSource == "" {
				t.Errorf("container %s: event %+v", c.ID, ev)
			}
			if ev.Vessel != nil && vesselID == "" {
				vesselID, imo = ev.Vessel.ID, ev.Vessel.IMO
			}
		}
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("container %s: transport events %v, table %v", c.ID, got, want)
		}
		var raw []string
		e.SQL(t, &raw, `SELECT id::text FROM raw_events WHERE container_id = $1 ORDER BY event_at NULLS LAST, position, id`, c.ID)
		var gotRaw []string
		for _, ev := range c.RawEvents {
			gotRaw = append(gotRaw, ev.ID)
		}
		if !slices.Equal(gotRaw, raw) {
			t.Errorf("container %s: raw events %v, table %v", c.ID, gotRaw, raw)
		}
	}
	if vesselID == "" {
		t.Fatal("no vessel in the journeys")
	}
	const q = `query($id: ID!) { vessel(id: $id) { id name imo } }`
	for _, id := range []string{vesselID, imo} {
		var v struct{ Vessel *struct{ ID, IMO string } }
		e.Must(t, e.Key(t, globexViewer), q, testkit.Vars{"id": id}, &v)
		if v.Vessel == nil || v.Vessel.ID != vesselID || v.Vessel.IMO != imo {
			t.Errorf("vessel(id: %s) = %+v", id, v.Vessel)
		}
	}
	for _, id := range []string{"nope", "0000000", "00000000-0000-0000-0000-000000000000"} {
		var v struct{ Vessel *struct{ ID string } }
		e.Must(t, k, q, testkit.Vars{"id": id}, &v)
		if v.Vessel != nil {
			t.Errorf("vessel(id: %s) = %+v, want null", id, v.Vessel)
		}
	}
	// globex reads none of acme's containers' events.
	var g journeyPage
	e.Must(t, e.Key(t, globexAdmin), journeyQuery, testkit.Vars{"first": 50}, &g)
	for _, c := range g.Containers.Nodes {
		for _, ev := range c.TransportEvents {
			acct := e.Text(t, `SELECT a.slug FROM transport_events te JOIN accounts a ON a.id = te.account_id WHERE te.id = $1`, ev.ID)
			if acct != "globex" {
				t.Errorf("globex's container %s shows %s's event %s", c.ID, acct, ev.ID)
			}
		}
	}
}
