package rest_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"shipgraph/rest"
)

// Over the seeded data, every page of the lists that render attributes
// through the writers of encode.go (documents, shipments, containers with
// every include, with and without sparse fieldsets) is byte for byte what
// encoding/json writes for the same attribute structs. Not parallel: the
// switch is global.
func TestAttributeWritersOnSeededData(t *testing.T) {
	e := newEnv(t, envOptions{shipments: 150, serial: true})
	t.Cleanup(func() { rest.SetReflectAttributes(false) })
	lists := []string{
		"/v2/documents?include=shipments,cargos,account,user,email_submission,last_document_representation&page[size]=100",
		"/v2/shipments?include=destination,port_of_lading,port_of_discharge,containers,pod_terminal,destination_terminal,line_tracking_stopped_by_user&page[size]=100",
		"/v2/containers?include=shipment,pod_terminal,pickup_facility&page[size]=100",
		"/v2/documents?include=shipments,cargos&page[size]=100" +
			"&fields[document]=name,document_type,created_at,shipments,cargos" +
			"&fields[shipment]=bill_of_lading_number,pod_eta_at&fields[container]=number,current_status",
		"/v2/shipments?include=containers,pod_terminal,port_of_discharge&page[size]=100" +
			"&fields[shipment]=containers&fields[container]=holds_at_pod_terminal,fees_at_pod_terminal,import_deadlines,weight_in_lbs" +
			"&fields[terminal]=name,firms_code,zip&fields[port]=latitude,longitude,code",
		"/v2/containers?include=shipment&page[size]=100&fields[shipment]=&fields[container]=ref_numbers,available_for_pickup",
	}
	pages := 0
	for _, path := range lists {
		for path != "" {
			rest.SetReflectAttributes(true)
			want := e.do("acme/admin", "GET", path, nil)
			rest.SetReflectAttributes(false)
			got := e.do("acme/admin", "GET", path, nil)
			if want.status != http.StatusOK || got.status != http.StatusOK {
				t.Fatalf("GET %s: %d, %d\n%s", path, want.status, got.status, got.body)
			}
			if !bytes.Equal(got.body, want.body) {
				i := 0
				for i < len(got.body) && i < len(want.body) && got.body[i] == want.body[i] {
					i++
				}
				from := max(i-200, 0)
				t.Fatalf("GET %s differs at byte %d:\nwriters:       …%s\nencoding/json: …%s", path, i,
					got.body[from:min(i+200, len(got.body))], want.body[from:min(i+200, len(want.body))])
			}
			pages++
			next, _ := obj(got.json(t), "links")["next"].(string)
			path = strings.TrimPrefix(next, publicBase)
		}
	}
	if pages < 10 {
		t.Fatalf("only %d pages compared", pages)
	}
}
