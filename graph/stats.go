package graph

import (
	"context"

	"shipgraph/load"
	"shipgraph/resolve"
)

// groupRecords says which records the groups of the stats field being
// resolved show (podTerminal, portOfDischarge, shippingLine) and the plans
// of what those select below them (a terminal's port), so that resolve
// attaches them with one batched read each.
func groupRecords(ctx context.Context) resolve.GroupRecords {
	var g resolve.GroupRecords
	_, fields := subfields(ctx)
	for _, f := range fields {
		switch f.Name {
		case "podTerminal":
			g.PodTerminal = true
			g.TerminalPlan = mergePlan(g.TerminalPlan, planOf(ctx, "Terminal", f.Selections))
		case "portOfDischarge":
			g.PortOfDischarge = true
			g.PortPlan = mergePlan(g.PortPlan, planOf(ctx, "Port", f.Selections))
		case "shippingLine":
			g.ShippingLine = true
		}
	}
	return g
}

// mergePlan adds q to p (either may be nil).
func mergePlan(p, q *load.Plan) *load.Plan {
	if q == nil {
		return p
	}
	if p == nil {
		p = &load.Plan{}
	}
	p.Merge(q)
	return p
}
