package resolve

import (
	"context"
	"strings"

	"shipgraph/load"
	"shipgraph/model"
)

// Batch reads by key for Apollo Federation's _entities (graph/entity.resolvers.go,
// docs/federation.md): a gateway sends any number of representations of a
// type at once, and they cost what one does — one statement per type
// through the request's by-id loader (deduped and cached with every other
// read of the request), then one statement per relationship and level of
// the plan over all the records found. The answer is aligned with the keys:
// an unknown or malformed key, or another account's record, is nil (the
// entity is null), never an error and never the record.

// entities reads records of one type by id through loader and runs plan
// on those found.
func entities[T any](ctx context.Context, p *model.Principal, loader func(*load.Loaders) *load.Loader[*T], ids []string, plan *load.Plan) ([]*T, error) {
	_, l, err := begin(ctx, p, plan)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(ids))
	valid := make([]string, 0, len(ids))
	for i, id := range ids {
		if validID(id) {
			keys[i] = strings.ToLower(id)
			valid = append(valid, keys[i])
		}
	}
	got, err := loader(l).LoadAll(ctx, valid)
	if err != nil {
		return nil, err
	}
	out := make([]*T, len(ids))
	for i, k := range keys {
		out[i] = got[k]
	}
	return out, loadFound(ctx, out, plan)
}

// loadFound runs plan on the records of rows that were found, each once.
func loadFound[T any](ctx context.Context, rows []*T, plan *load.Plan) error {
	found := make([]*T, 0, len(rows))
	seen := make(map[*T]bool, len(rows))
	for _, v := range rows {
		if v != nil && !seen[v] {
			seen[v] = true
			found = append(found, v)
		}
	}
	return load.Load(ctx, found, plan)
}

// ShipmentsByID reads the account's shipments by id.
func (r *Resolver) ShipmentsByID(ctx context.Context, p *model.Principal, ids []string, plan *load.Plan) ([]*model.Shipment, error) {
	return entities(ctx, p, func(l *load.Loaders) *load.Loader[*model.Shipment] { return l.ShipmentByID }, ids, plan)
}

// ContainersByID reads the account's containers by id.
func (r *Resolver) ContainersByID(ctx context.Context, p *model.Principal, ids []string, plan *load.Plan) ([]*model.Container, error) {
	return entities(ctx, p, func(l *load.Loaders) *load.Loader[*model.Container] { return l.ContainerByID }, ids, plan)
}

// DocumentsByID reads the account's documents by id.
func (r *Resolver) DocumentsByID(ctx context.Context, p *model.Principal, ids []string, plan *load.Plan) ([]*model.Document, error) {
	return entities(ctx, p, func(l *load.Loaders) *load.Loader[*model.Document] { return l.DocumentByID }, ids, plan)
}

// DefinitionsByID reads the account's custom field definitions by id.
func (r *Resolver) DefinitionsByID(ctx context.Context, p *model.Principal, ids []string, plan *load.Plan) ([]*model.CustomFieldDefinition, error) {
	return entities(ctx, p, func(l *load.Loaders) *load.Loader[*model.CustomFieldDefinition] { return l.DefinitionByID }, ids, plan)
}

// TerminalsByID reads terminals (reference data) by id.
func (r *Resolver) TerminalsByID(ctx context.Context, p *model.Principal, ids []string, plan *load.Plan) ([]*model.Terminal, error) {
	return entities(ctx, p, func(l *load.Loaders) *load.Loader[*model.Terminal] { return l.TerminalByID }, ids, plan)
}

// PortsByID reads ports (reference data) by id.
func (r *Resolver) PortsByID(ctx context.Context, p *model.Principal, ids []string, plan *load.Plan) ([]*model.Port, error) {
	return entities(ctx, p, func(l *load.Loaders) *load.Loader[*model.Port] { return l.PortByID }, ids, plan)
}

// PortsByCode reads ports by UN/LOCODE (case-insensitive) in one statement,
// and caches them in the request's port loader.
func (r *Resolver) PortsByCode(ctx context.Context, p *model.Principal, codes []string) ([]*model.Port, error) {
	_, l, err := principal(ctx, p)
	if err != nil {
		return nil, err
	}
	ports, err := r.DB.PortsByCodes(ctx, codes)
	if err != nil {
		return nil, err
	}
	byCode := make(map[string]*model.Port, len(ports))
	for _, p := range ports {
		byCode[p.Code] = p
		l.PortByID.Prime(p.ID, p)
	}
	out := make([]*model.Port, len(codes))
	for i, c := range codes {
		out[i] = byCode[strings.ToUpper(strings.TrimSpace(c))]
	}
	return out, nil
}

// ShippingLinesByID reads shipping lines (reference data) by id in one
// statement.
func (r *Resolver) ShippingLinesByID(ctx context.Context, p *model.Principal, ids []string) ([]*model.ShippingLine, error) {
	if _, err := authenticated(p); err != nil {
		return nil, err
	}
	lines, err := r.DB.ShippingLinesByIDs(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*model.ShippingLine, len(lines))
	for _, sl := range lines {
		byID[sl.ID] = sl
	}
	out := make([]*model.ShippingLine, len(ids))
	for i, id := range ids {
		out[i] = byID[strings.ToLower(id)]
	}
	return out, nil
}

// ShippingLinesBySCAC reads shipping lines by SCAC in one statement: a
// line's own SCAC, or else one of its alternatives (as ShippingLine does).
func (r *Resolver) ShippingLinesBySCAC(ctx context.Context, p *model.Principal, scacs []string) ([]*model.ShippingLine, error) {
	if _, err := authenticated(p); err != nil {
		return nil, err
	}
	lines, err := r.DB.ShippingLinesBySCACs(ctx, scacs)
	if err != nil {
		return nil, err
	}
	bySCAC := make(map[string]*model.ShippingLine, len(lines))
	for _, sl := range lines {
		bySCAC[sl.Scac] = sl
	}
	for _, sl := range lines {
		for _, alt := range sl.AlternativeScacs {
			if _, own := bySCAC[alt]; !own {
				bySCAC[alt] = sl
			}
		}
	}
	out := make([]*model.ShippingLine, len(scacs))
	for i, s := range scacs {
		out[i] = bySCAC[strings.ToUpper(strings.TrimSpace(s))]
	}
	return out, nil
}
