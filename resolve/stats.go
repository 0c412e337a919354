package resolve

import (
	"context"
	"slices"
	"time"

	"shipgraph/load"
	"shipgraph/model"
)

// Grouped counts: a list's records, kept by the list's filter, counted per
// combination of keys in one statement (db/stats.go). The keys that name
// records (terminal, port, shipping line) are attached to the groups here,
// each kind with one batched read through the request's loaders, only
// when the caller shows them: as a list's relationships are by its plan.

// GroupRecords says which records named by a grouped count's keys the
// caller shows, and the load plans to run on them (a terminal's port …).
type GroupRecords struct {
	PodTerminal, PortOfDischarge, ShippingLine bool
	TerminalPlan, PortPlan                     *load.Plan
}

// StatsQuery is a grouped count: the list's filter, the keys, the records
// to attach; Now is "today" for last free days (zero: the clock).
type StatsQuery[F, K any] struct {
	Filter  F
	GroupBy []K
	Records GroupRecords
	Now     time.Time
}

// The grouped counts of each list.
type (
	ContainerStatsQuery = StatsQuery[model.ContainerFilter, model.ContainerGroupBy]
	ShipmentStatsQuery  = StatsQuery[model.ShipmentFilter, model.ShipmentGroupBy]
)

func statsNow(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

// ContainerStats counts the account's containers in groups.
func (r *Resolver) ContainerStats(ctx context.Context, p *model.Principal, q ContainerStatsQuery) ([]*model.Group, error) {
	if p == nil {
		return nil, model.Errorf(model.EUNAUTHENTICATED, "a valid API key is required")
	}
	groups, err := r.DB.ContainerStats(ctx, p.AccountID, q.Filter, q.GroupBy, statsNow(q.Now))
	if err != nil {
		return nil, err
	}
	return groups, r.attachGroupRecords(ctx, groups, q.Records)
}

// ShipmentStats counts the account's shipments in groups.
func (r *Resolver) ShipmentStats(ctx context.Context, p *model.Principal, q ShipmentStatsQuery) ([]*model.Group, error) {
	if p == nil {
		return nil, model.Errorf(model.EUNAUTHENTICATED, "a valid API key is required")
	}
	groups, err := r.DB.ShipmentStats(ctx, p.AccountID, q.Filter, q.GroupBy, statsNow(q.Now))
	if err != nil {
		return nil, err
	}
	return groups, r.attachGroupRecords(ctx, groups, q.Records)
}

// attachGroupRecords reads the terminals, ports and shipping lines the
// groups name (reference data: one statement per kind at most, none when
// the loaders' cache has them) and runs the callers' plans on them.
func (r *Resolver) attachGroupRecords(ctx context.Context, groups []*model.Group, with GroupRecords) error {
	if len(groups) == 0 || !(with.PodTerminal || with.PortOfDischarge || with.ShippingLine) {
		return nil
	}
	l, err := load.For(ctx)
	if err != nil {
		return err
	}
	keys := func(id func(*model.Group) *string) []string {
		var out []string
		for _, g := range groups {
			if k := id(g); k != nil && !slices.Contains(out, *k) {
				out = append(out, *k)
			}
		}
		return out
	}
	if with.PodTerminal {
		byID, err := l.TerminalByID.LoadAll(ctx, keys(func(g *model.Group) *string { return g.PodTerminalID }))
		if err != nil {
			return err
		}
		var terminals []*model.Terminal
		for _, g := range groups {
			if g.PodTerminalID != nil && byID[*g.PodTerminalID] != nil {
				g.Rel.PodTerminal = byID[*g.PodTerminalID]
				terminals = append(terminals, g.Rel.PodTerminal)
			}
		}
		if err := load.Load(ctx, terminals, with.TerminalPlan); err != nil {
			return err
		}
	}
	if with.PortOfDischarge {
		byID, err := l.PortByID.LoadAll(ctx, keys(func(g *model.Group) *string { return g.PortOfDischargeID }))
		if err != nil {
			return err
		}
		var ports []*model.Port
		for _, g := range groups {
			if g.PortOfDischargeID != nil && byID[*g.PortOfDischargeID] != nil {
				g.Rel.PortOfDischarge = byID[*g.PortOfDischargeID]
				ports = append(ports, g.Rel.PortOfDischarge)
			}
		}
		if err := load.Load(ctx, ports, with.PortPlan); err != nil {
			return err
		}
	}
	if with.ShippingLine {
		scacs := keys(func(g *model.Group) *string { return g.ShippingLineScac })
		if len(scacs) == 0 {
			return nil
		}
		lines, err := r.DB.ShippingLinesBySCACs(ctx, scacs)
		if err != nil {
			return err
		}
		byScac := make(map[string]*model.ShippingLine, len(lines))
		for _, sl := range lines {
			byScac[sl.Scac] = sl
		}
		for _, sl := range lines { // a line's own SCAC before another's alternative
			for _, alt := range sl.AlternativeScacs {
				if _, own := byScac[alt]; !own {
					byScac[alt] = sl
				}
			}
		}
		for _, g := range groups {
			if g.ShippingLineScac != nil {
				g.Rel.ShippingLine = byScac[*g.ShippingLineScac]
			}
		}
	}
	return nil
}

// ContainerStatusHistory counts the account's containers by status at the
// end of each day of days (24 hours each) from from, as their actual
// milestones tell (db.ContainerStatusHistory). Days that have not begun
// by now are left out; the day now falls in ends at now.
func (r *Resolver) ContainerStatusHistory(ctx context.Context, p *model.Principal, from time.Time, days int, now time.Time) ([]*model.ContainerStatusDay, error) {
	if p == nil {
		return nil, model.Errorf(model.EUNAUTHENTICATED, "a valid API key is required")
	}
	if days < 1 || days > model.MaxStatusHistoryDays {
		return nil, model.Errorf(model.EINVALID, "days must be between 1 and %d", model.MaxStatusHistoryDays).AtParameter("days")
	}
	now = statsNow(now)
	if from.After(now) {
		return nil, model.Errorf(model.EINVALID, "from must not be in the future").AtParameter("from")
	}
	const day = 24 * time.Hour
	if begun := int(now.Sub(from)/day) + 1; days > begun {
		days = begun
	}
	end := from.Add(time.Duration(days) * day)
	if end.After(now) {
		end = now
	}
	return r.DB.ContainerStatusHistory(ctx, p.AccountID, from, end, days)
}
