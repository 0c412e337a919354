package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vikstrous/dataloadgen"

	"shipgraph/graph/model"
)

// Prefetching makes batching independent of timing.
//
// A loader batches the keys that reach it within its wait (about a
// millisecond) of the first. Under gqlgen every parent of a list resolves
// in a goroutine of its own, so the keys of one relationship arrive spread
// over however long the scheduler takes to run a hundred goroutines; on a
// busy machine that is longer than the wait, a batch splits, and a page of
// 100 costs a statement per straggler (the dashboard measured 10–36
// statements instead of 7). So wherever the whole set of parents is known
// at once — the page of a root list, the rows a batch just read — the keys
// of every relationship the operation selects on them are handed to the
// loaders right away, in one call per loader (LoadAllThunk, not waited
// for). The field resolvers then find their keys already queued or cached
// and the batch is complete whatever the timing: one statement per
// relationship and level. Only what the operation selects is fetched.
//
// Outside GraphQL (the /v2 adapter calls resolvers directly) there is no
// operation to read selections from, and nothing is prefetched: the
// adapter warms its loaders itself.

type selectionKey struct{}

// withSelection returns ctx carrying the selection under which the rows of
// the batch it starts will be read.
func withSelection(ctx context.Context, set ast.SelectionSet) context.Context {
	return context.WithValue(ctx, selectionKey{}, set)
}

// abstractTypes are the schema's interfaces and unions: a field of one of
// these types selects on the concrete type through fragments.
var abstractTypes = map[string]bool{"Node": true, "Destination": true, "DestinationTerminal": true, "CustomFieldEntity": true}

// selectionFor returns the selection the rows of typ read in a batch are
// rendered with: the one prefetch passed down, or the selection of the
// field whose resolver started the batch (when that field is of typ).
func selectionFor(ctx context.Context, typ string) ast.SelectionSet {
	if set, ok := ctx.Value(selectionKey{}).(ast.SelectionSet); ok {
		return set
	}
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil || fc.Field.Definition == nil {
		return nil
	}
	if named := fc.Field.Definition.Type.Name(); named == typ || abstractTypes[named] {
		return fc.Field.Selections
	}
	return nil
}

// selected returns the fields the selection set asks for on typ, by field
// name (aliases merged), honouring fragments and @skip/@include.
func selected(ctx context.Context, set ast.SelectionSet, typ string) map[string]ast.SelectionSet {
	if len(set) == 0 || !graphql.HasOperationContext(ctx) {
		return nil
	}
	out := map[string]ast.SelectionSet{}
	for _, f := range graphql.CollectFields(graphql.GetOperationContext(ctx), set, []string{typ, "Node"}) {
		out[f.Name] = append(out[f.Name], f.Selections...)
	}
	return out
}

// keys collects the distinct non-empty keys of rows.
func keys[T any](rows []T, key func(T) *string) []string {
	seen := make(map[string]bool, len(rows))
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		if k := key(r); k != nil && *k != "" && !seen[*k] {
			seen[*k] = true
			out = append(out, *k)
		}
	}
	return out
}

// queue hands keys to a loader without waiting for them.
func queue[V any](ctx context.Context, l *dataloadgen.Loader[string, V], set ast.SelectionSet, ids []string) {
	if len(ids) > 0 {
		l.LoadAllThunk(withSelection(ctx, set), ids)
	}
}

// merged returns the union of the selections of several fields that load
// through one loader (podTerminal and pickupFacility), and whether any of
// them is selected.
func merged(f map[string]ast.SelectionSet, names ...string) (ast.SelectionSet, bool) {
	var set ast.SelectionSet
	found := false
	for _, n := range names {
		if s, ok := f[n]; ok {
			set, found = append(set, s...), true
		}
	}
	return set, found
}

func idOf[T interface{ GetID() string }](x T) *string {
	id := x.GetID()
	return &id
}

// The prefetchers mirror the field resolvers of schema.resolvers.go: the
// same loader and key for each relationship, and no key where the resolver
// would not load (a nil foreign key, options of a type without options).
// A mismatch costs an extra statement, never a wrong answer.

func (l *Loaders) prefetchShipments(ctx context.Context, set ast.SelectionSet, rows []*model.Shipment) {
	f := selected(ctx, set, "Shipment")
	if len(f) == 0 || len(rows) == 0 {
		return
	}
	all := keys(rows, idOf[*model.Shipment])
	if s, ok := f["containers"]; ok {
		queue(ctx, l.ContainersByShipmentID, s, all)
	}
	if s, ok := merged(f, "customFields", "customField"); ok {
		queue(ctx, l.CustomFieldsByEntityID, s, all)
	}
	if s, ok := f["documents"]; ok {
		queue(ctx, l.DocumentsByShipmentID, s, all)
	}
	var ports []string
	if _, ok := f["portOfLading"]; ok {
		ports = append(ports, keys(rows, func(s *model.Shipment) *string { return s.PortOfLadingID })...)
	}
	if _, ok := f["portOfDischarge"]; ok {
		ports = append(ports, keys(rows, func(s *model.Shipment) *string { return s.PortOfDischargeID })...)
	}
	if _, ok := f["destination"]; ok {
		queue(ctx, l.MetroAreaByID, nil, keys(rows, func(s *model.Shipment) *string { return s.DestinationMetroAreaID }))
		ports = append(ports, keys(rows, func(s *model.Shipment) *string {
			if s.DestinationMetroAreaID != nil {
				return nil
			}
			return s.DestinationPortID
		})...)
	}
	queue(ctx, l.PortByID, nil, ports)
	var terminals []string
	terminalSet, _ := merged(f, "podTerminal", "destinationTerminal")
	if _, ok := f["podTerminal"]; ok {
		terminals = append(terminals, keys(rows, func(s *model.Shipment) *string { return s.PodTerminalID })...)
	}
	if s, ok := f["destinationTerminal"]; ok {
		queue(ctx, l.RailTerminalByID, s, keys(rows, func(s *model.Shipment) *string { return s.DestinationRailTerminalID }))
		terminals = append(terminals, keys(rows, func(s *model.Shipment) *string {
			if s.DestinationRailTerminalID != nil {
				return nil
			}
			return s.DestinationTerminalID
		})...)
	}
	queue(ctx, l.TerminalByID, terminalSet, terminals)
	if _, ok := f["lineTrackingStoppedByUser"]; ok {
		queue(ctx, l.UserByID, nil, keys(rows, func(s *model.Shipment) *string { return s.LineTrackingStoppedByUserID }))
	}
}

func (l *Loaders) prefetchContainers(ctx context.Context, set ast.SelectionSet, rows []*model.Container) {
	f := selected(ctx, set, "Container")
	if len(f) == 0 || len(rows) == 0 {
		return
	}
	all := keys(rows, idOf[*model.Container])
	if s, ok := f["shipment"]; ok {
		queue(ctx, l.ShipmentByID, s, keys(rows, func(c *model.Container) *string { return &c.ShipmentID }))
	}
	if s, ok := merged(f, "podTerminal", "pickupFacility"); ok {
		var ids []string
		if _, ok := f["podTerminal"]; ok {
			ids = append(ids, keys(rows, func(c *model.Container) *string { return c.PodTerminalID })...)
		}
		if _, ok := f["pickupFacility"]; ok {
			ids = append(ids, keys(rows, func(c *model.Container) *string { return c.PickupFacilityID })...)
		}
		queue(ctx, l.TerminalByID, s, ids)
	}
	if s, ok := f["customFields"]; ok {
		queue(ctx, l.CustomFieldsByEntityID, s, all)
	}
	if s, ok := f["documents"]; ok {
		queue(ctx, l.DocumentsByContainerID, s, all)
	}
}

func (l *Loaders) prefetchDocuments(ctx context.Context, set ast.SelectionSet, rows []*model.Document) {
	f := selected(ctx, set, "Document")
	if len(f) == 0 || len(rows) == 0 {
		return
	}
	all := keys(rows, idOf[*model.Document])
	if _, ok := f["account"]; ok {
		queue(ctx, l.AccountByID, nil, keys(rows, func(d *model.Document) *string { return &d.AccountID }))
	}
	if _, ok := f["user"]; ok {
		queue(ctx, l.UserByID, nil, keys(rows, func(d *model.Document) *string { return d.UserID }))
	}
	if _, ok := f["emailSubmission"]; ok {
		queue(ctx, l.EmailSubmissionByID, nil, keys(rows, func(d *model.Document) *string { return d.EmailSubmissionID }))
	}
	if _, ok := f["lastDocumentRepresentation"]; ok {
		queue(ctx, l.DocumentRepresentationByID, nil, keys(rows, func(d *model.Document) *string { return d.LastDocumentRepresentationID }))
	}
	if s, ok := f["shipments"]; ok {
		queue(ctx, l.ShipmentsByDocumentID, s, all)
	}
	if s, ok := f["cargos"]; ok {
		queue(ctx, l.ContainersByDocumentID, s, all)
	}
}

func (l *Loaders) prefetchTerminals(ctx context.Context, set ast.SelectionSet, rows []*model.Terminal) {
	if _, ok := selected(ctx, set, "Terminal")["port"]; ok {
		queue(ctx, l.PortByID, nil, keys(rows, func(t *model.Terminal) *string { return &t.PortID }))
	}
}

func (l *Loaders) prefetchRailTerminals(ctx context.Context, set ast.SelectionSet, rows []*model.RailTerminal) {
	f := selected(ctx, set, "RailTerminal")
	if _, ok := f["port"]; ok {
		queue(ctx, l.PortByID, nil, keys(rows, func(t *model.RailTerminal) *string { return t.PortID }))
	}
	if _, ok := f["metroArea"]; ok {
		queue(ctx, l.MetroAreaByID, nil, keys(rows, func(t *model.RailTerminal) *string { return t.MetroAreaID }))
	}
}

func (l *Loaders) prefetchCustomFields(ctx context.Context, set ast.SelectionSet, rows []*model.CustomField) {
	f := selected(ctx, set, "CustomField")
	if len(f) == 0 || len(rows) == 0 {
		return
	}
	if s, ok := f["definition"]; ok {
		queue(ctx, l.DefinitionByID, s, keys(rows, func(c *model.CustomField) *string { return &c.DefinitionID }))
	}
	if s, ok := f["entity"]; ok {
		queue(ctx, l.ContainerByID, s, keys(rows, func(c *model.CustomField) *string { return c.ContainerID }))
		queue(ctx, l.ShipmentByID, s, keys(rows, func(c *model.CustomField) *string {
			if c.ContainerID != nil {
				return nil
			}
			return c.ShipmentID
		}))
	}
}

func (l *Loaders) prefetchDefinitions(ctx context.Context, set ast.SelectionSet, rows []*model.CustomFieldDefinition) {
	if s, ok := selected(ctx, set, "CustomFieldDefinition")["options"]; ok {
		queue(ctx, l.OptionsByDefinitionID, s, keys(rows, func(d *model.CustomFieldDefinition) *string {
			if !d.DataType.HasOptions() {
				return nil
			}
			return &d.ID
		}))
	}
}

func (l *Loaders) prefetchOptions(ctx context.Context, set ast.SelectionSet, rows []*model.CustomFieldOption) {
	if s, ok := selected(ctx, set, "CustomFieldOption")["definition"]; ok {
		queue(ctx, l.DefinitionByID, s, keys(rows, func(o *model.CustomFieldOption) *string { return &o.DefinitionID }))
	}
}

// connectionNodes returns the selection on the nodes of a connection field
// being resolved: what `nodes { … }` and `edges { node { … } }` select.
func connectionNodes(ctx context.Context) ast.SelectionSet {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil || fc.Field.Definition == nil || !graphql.HasOperationContext(ctx) {
		return nil
	}
	opCtx := graphql.GetOperationContext(ctx)
	var set ast.SelectionSet
	for _, f := range graphql.CollectFields(opCtx, fc.Field.Selections, []string{fc.Field.Definition.Type.Name()}) {
		switch f.Name {
		case "nodes":
			set = append(set, f.Selections...)
		case "edges":
			for _, e := range graphql.CollectFields(opCtx, f.Selections, []string{f.Definition.Type.Name()}) {
				if e.Name == "node" {
					set = append(set, e.Selections...)
				}
			}
		}
	}
	return set
}
