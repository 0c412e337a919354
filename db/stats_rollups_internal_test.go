package db

import (
	"testing"

	"shipgraph/model"
)

// TestStatsRollupChoice: which grouped counts sum a rollup (and which),
// and which count the rows; filters on anything a rollup does not hold
// always count the rows.
func TestStatsRollupChoice(t *testing.T) {
	const acct = "7d8c3ad9-5d52-4a9f-9d89-2f0f3f6d8a11"
	yes := true
	cspecs := func(keys ...model.ContainerGroupBy) []statKey {
		var out []statKey
		for _, k := range keys {
			out = append(out, containerStatKeys[k])
		}
		return out
	}
	sspecs := func(keys ...model.ShipmentGroupBy) []statKey {
		var out []statKey
		for _, k := range keys {
			out = append(out, shipmentStatKeys[k])
		}
		return out
	}
	name := func(r *rollup) string {
		if r == nil {
			return "GROUP BY"
		}
		return r.table
	}
	for _, c := range []struct {
		f    model.ContainerFilter
		keys []statKey
		want string
	}{
		{model.ContainerFilter{}, cspecs(model.ContainerGroupByStatus), "container_lfd_stats"},
		{model.ContainerFilter{}, nil, "container_lfd_stats"},
		{model.ContainerFilter{}, cspecs(model.ContainerGroupByPodTerminal, model.ContainerGroupByLastFreeDay), "container_lfd_stats"},
		{model.ContainerFilter{}, cspecs(model.ContainerGroupByShippingLine), "container_stats"},
		{model.ContainerFilter{Statuses: []model.ContainerStatus{model.ContainerStatus("available")}},
			cspecs(model.ContainerGroupByEtaWeek, model.ContainerGroupByPortOfDischarge), "container_stats"},
		{model.ContainerFilter{PodTerminalIDs: []string{acct}}, cspecs(model.ContainerGroupByLastFreeDay), "container_lfd_stats"},
		{model.ContainerFilter{}, cspecs(model.ContainerGroupByLastFreeDay, model.ContainerGroupByShippingLine), "GROUP BY"},
		{model.ContainerFilter{HasHolds: &yes}, cspecs(model.ContainerGroupByStatus), "GROUP BY"},
		{model.ContainerFilter{ShipmentIDs: []string{acct}}, nil, "GROUP BY"},
		{model.ContainerFilter{Number: "MSCU1234567"}, nil, "GROUP BY"},
	} {
		r, _ := containerRollup(acct, c.f, c.keys)
		if got := name(r); got != c.want {
			t.Errorf("containers %+v by %d keys: %s, want %s", c.f, len(c.keys), got, c.want)
		}
	}
	for _, c := range []struct {
		f    model.ShipmentFilter
		keys []statKey
		want string
	}{
		{model.ShipmentFilter{}, sspecs(model.ShipmentGroupByPodTerminal, model.ShipmentGroupByEtaWeek), "shipment_stats"},
		{model.ShipmentFilter{ShippingLineScacs: []string{"MAEU"}, PortOfDischargeIDs: []string{acct}}, nil, "shipment_stats"},
		{model.ShipmentFilter{TrackingStopped: new(bool)}, sspecs(model.ShipmentGroupByShippingLine), "GROUP BY"},
		{model.ShipmentFilter{Search: "MAEU"}, nil, "GROUP BY"},
	} {
		r, _ := shipmentRollup(acct, c.f, c.keys)
		if got := name(r); got != c.want {
			t.Errorf("shipments %+v by %d keys: %s, want %s", c.f, len(c.keys), got, c.want)
		}
	}
}
