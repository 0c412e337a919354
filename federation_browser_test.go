//go:build browser

package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrowserFederationGateway composes the real server with a second
// subgraph (customers, extending Shipment) through Apollo Gateway with
// IntrospectAndCompose inside Apollo Server (npm; scripts/federation-gateway.sh)
// and runs queries across both: customers → their shipments (Shipgraph's
// _entities) and shipments → their customer (the other subgraph's).
func TestBrowserFederationGateway(t *testing.T) {
	needNPM(t, "the federation gateway test")
	_, base, keys := serveSeeded(t, "5")
	auth := "Token " + keys["acme viewer"]

	// Four of the account's shipments, in the order shipments(first:) lists them.
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader([]byte(`{"query":"{ shipments(first: 4) { nodes { id billOfLadingNumber } } }"}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", auth)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Data struct {
			Shipments struct {
				Nodes []struct{ ID, BillOfLadingNumber string }
			}
		}
	}
	err = json.NewDecoder(res.Body).Decode(&page)
	res.Body.Close()
	if err != nil || len(page.Data.Shipments.Nodes) != 4 {
		t.Fatalf("shipments: %v %+v", err, page)
	}
	bl := map[string]string{}
	var ids []string
	for _, n := range page.Data.Shipments.Nodes {
		bl[n.ID] = n.BillOfLadingNumber
		ids = append(ids, n.ID)
	}

	cmd := exec.Command(filepath.Join("scripts", "federation-gateway.sh"), append([]string{base + "/graphql"}, ids...)...)
	cmd.Env = append(os.Environ(), "SHIPGRAPH_AUTHORIZATION="+auth)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	t.Logf("%s%s", out, stderr.Bytes())
	if err != nil {
		t.Fatalf("gateway: %v", err)
	}
	answers := map[string]json.RawMessage{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue // Apollo Server's own notes
		}
		var a struct {
			Query  string
			Status int
			Data   json.RawMessage
			Errors []any
		}
		if err := json.Unmarshal([]byte(line), &a); err != nil || a.Status != 200 || len(a.Errors) > 0 {
			t.Fatalf("gateway answer %q: %v", line, err)
		}
		answers[a.Query] = a.Data
	}
	if len(answers) != 2 {
		t.Fatalf("gateway answered %d queries, want 2", len(answers))
	}

	// Customers (their subgraph) with their shipments' attributes and
	// containers (Shipgraph's, by _entities).
	var cs struct {
		Customers []struct {
			Name      string
			Shipments []struct {
				ID, BillOfLadingNumber string
				Containers             []struct{ Number string }
				Customer               struct{ Name string } `json:"crmCustomer"`
			}
		}
	}
	if err := json.Unmarshal(answers["customers"], &cs); err != nil || len(cs.Customers) != 2 {
		t.Fatalf("customers: %v %s", err, answers["customers"])
	}
	seen := 0
	for _, c := range cs.Customers {
		for _, s := range c.Shipments {
			seen++
			if s.BillOfLadingNumber == "" || s.BillOfLadingNumber != bl[s.ID] || s.Customer.Name != c.Name {
				t.Errorf("customer %s: shipment %+v, want bill of lading %q", c.Name, s, bl[s.ID])
			}
		}
	}
	if seen != len(ids) {
		t.Errorf("customers hold %d shipments, want %d", seen, len(ids))
	}

	// Shipments (Shipgraph) with their customer (the other subgraph).
	var ss struct {
		Shipments struct {
			Nodes []struct {
				ID       string
				Customer *struct{ Name string } `json:"crmCustomer"`
			}
		}
	}
	if err := json.Unmarshal(answers["shipments"], &ss); err != nil || len(ss.Shipments.Nodes) != 3 {
		t.Fatalf("shipments: %v %s", err, answers["shipments"])
	}
	for i, n := range ss.Shipments.Nodes {
		want := []string{"Initech", "Hooli"}[i%2]
		if n.ID != ids[i] || n.Customer == nil || n.Customer.Name != want {
			t.Errorf("shipment %d: %+v, want %s of customer %s", i, n, ids[i], want)
		}
	}
}
