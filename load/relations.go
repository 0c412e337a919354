package load

import (
	"context"

	"shipgraph/model"
)

// relation is one relationship of one concrete type, declared once and used
// by the load plan (GraphQL and /v2), the column plan and linkage: where a
// record's key is, which loader reads it, and where the result is attached.
// A GraphQL field over an abstract type (destination, entity, …) is several
// relations, one per concrete target, each keyed only when it applies.
type relation struct {
	bit      uint   // the relationship's bit in the parent's model.Loaded
	keyCol   string // the parent column holding the key
	loader   func(*Loaders) any
	key      func(parent any) string // "" when the record has none
	fetch    func(ctx context.Context, l *Loaders, keys []string) (map[string]any, error)
	attach   func(parent, v any)
	children func(v any, out []any) []any
	many     bool // to-many: weighs manyWeight times its selection (handler.go)
}

// toOne declares a to-one relationship read by id.
func toOne[P model.Related, C any](bit uint, keyCol string, key func(P) *string, loader func(*Loaders) *Loader[C], set func(P, C)) *relation {
	return &relation{
		bit:    bit,
		keyCol: keyCol,
		loader: func(l *Loaders) any { return loader(l) },
		key: func(p any) string {
			if k := key(p.(P)); k != nil {
				return *k
			}
			return ""
		},
		fetch: func(ctx context.Context, l *Loaders, keys []string) (map[string]any, error) {
			return fetchAll(ctx, loader(l), keys)
		},
		attach:   func(p, v any) { set(p.(P), v.(C)) },
		children: func(v any, out []any) []any { return append(out, v) },
	}
}

// toMany declares a to-many relationship read by the parent's id.
func toMany[P model.Related, C any](bit uint, key func(P) string, loader func(*Loaders) *Loader[[]C], set func(P, []C)) *relation {
	return &relation{
		bit:    bit,
		keyCol: "id",
		loader: func(l *Loaders) any { return loader(l) },
		key:    func(p any) string { return key(p.(P)) },
		fetch: func(ctx context.Context, l *Loaders, keys []string) (map[string]any, error) {
			return fetchAll(ctx, loader(l), keys)
		},
		attach:   func(p, v any) { set(p.(P), v.([]C)) },
		children: func(v any, out []any) []any { return appendAll(out, v.([]C)) },
		many:     true,
	}
}

func appendAll[C any](out []any, xs []C) []any {
	for _, x := range xs {
		out = append(out, x)
	}
	return out
}

// fetchAll reads keys through a loader in one batch; keys it does not find
// are left out of the result.
func fetchAll[V any](ctx context.Context, ld *Loader[V], keys []string) (map[string]any, error) {
	got, err := ld.LoadAll(ctx, keys)
	if err != nil {
		return nil, err
	}
	m := make(map[string]any, len(got))
	for k, v := range got {
		m[k] = v
	}
	return m, nil
}

// unless returns key, or nil when other is set: for the two relations of one
// abstract field, the one that applies.
func unless(other, key *string) *string {
	if other != nil {
		return nil
	}
	return key
}

// relations are the relationships of every type, by GraphQL type and field
// name (which /v2 maps its relationship names to).
var relations = map[string]map[string][]*relation{
	"Shipment": {
		"containers": {toMany(0, func(s *model.Shipment) string { return s.ID }, func(l *Loaders) *Loader[[]*model.Container] { return l.ContainersByShipmentID },
			func(s *model.Shipment, v []*model.Container) { s.Rel.Containers = v })},
		// The ids of the containers alone, for /v2 linkage: not a GraphQL
		// field, and no container is read whole for it.
		"containerIDs": {toMany(11, func(s *model.Shipment) string { return s.ID }, func(l *Loaders) *Loader[[]string] { return l.ContainerIDsByShipment },
			func(s *model.Shipment, v []string) { s.Rel.ContainerIDs = v })},
		"customFields": {shipmentCustomFields},
		"customField":  {shipmentCustomFields},
		"documents": {toMany(2, func(s *model.Shipment) string { return s.ID }, func(l *Loaders) *Loader[[]*model.Document] { return l.DocumentsByShipmentID },
			func(s *model.Shipment, v []*model.Document) { s.Rel.Documents = v })},
		"portOfLading": {toOne(3, "port_of_lading_id", func(s *model.Shipment) *string { return s.PortOfLadingID }, portByID,
			func(s *model.Shipment, v *model.Port) { s.Rel.PortOfLading = v })},
		"portOfDischarge": {toOne(4, "port_of_discharge_id", func(s *model.Shipment) *string { return s.PortOfDischargeID }, portByID,
			func(s *model.Shipment, v *model.Port) { s.Rel.PortOfDischarge = v })},
		"destination": {
			toOne(5, "destination_metro_area_id", func(s *model.Shipment) *string { return s.DestinationMetroAreaID }, metroAreaByID,
				func(s *model.Shipment, v *model.MetroArea) { s.Rel.DestinationMetroArea = v }),
			toOne(6, "destination_port_id", func(s *model.Shipment) *string { return unless(s.DestinationMetroAreaID, s.DestinationPortID) }, portByID,
				func(s *model.Shipment, v *model.Port) { s.Rel.DestinationPort = v }),
		},
		"podTerminal": {toOne(7, "pod_terminal_id", func(s *model.Shipment) *string { return s.PodTerminalID }, terminalByID,
			func(s *model.Shipment, v *model.Terminal) { s.Rel.PodTerminal = v })},
		"destinationTerminal": {
			toOne(8, "destination_rail_terminal_id", func(s *model.Shipment) *string { return s.DestinationRailTerminalID },
				func(l *Loaders) *Loader[*model.RailTerminal] { return l.RailTerminalByID },
				func(s *model.Shipment, v *model.RailTerminal) { s.Rel.DestinationRailTerminal = v }),
			toOne(9, "destination_terminal_id", func(s *model.Shipment) *string {
				return unless(s.DestinationRailTerminalID, s.DestinationTerminalID)
			}, terminalByID, func(s *model.Shipment, v *model.Terminal) { s.Rel.DestinationTerminal = v }),
		},
		"lineTrackingStoppedByUser": {toOne(10, "line_tracking_stopped_by_user_id", func(s *model.Shipment) *string { return s.LineTrackingStoppedByUserID }, userByID,
			func(s *model.Shipment, v *model.User) { s.Rel.LineTrackingStoppedByUser = v })},
	},
	"Container": {
		"shipment": {toOne(0, "shipment_id", func(c *model.Container) *string { return &c.ShipmentID },
			func(l *Loaders) *Loader[*model.Shipment] { return l.ShipmentByID },
			func(c *model.Container, v *model.Shipment) { c.Rel.Shipment = v })},
		"podTerminal": {toOne(1, "pod_terminal_id", func(c *model.Container) *string { return c.PodTerminalID }, terminalByID,
			func(c *model.Container, v *model.Terminal) { c.Rel.PodTerminal = v })},
		"pickupFacility": {toOne(2, "pickup_facility_id", func(c *model.Container) *string { return c.PickupFacilityID }, terminalByID,
			func(c *model.Container, v *model.Terminal) { c.Rel.PickupFacility = v })},
		"customFields": {toMany(3, func(c *model.Container) string { return c.ID }, customFieldsByEntityID,
			func(c *model.Container, v []*model.CustomField) { c.Rel.CustomFields = v })},
		"documents": {toMany(4, func(c *model.Container) string { return c.ID }, func(l *Loaders) *Loader[[]*model.Document] { return l.DocumentsByContainerID },
			func(c *model.Container, v []*model.Document) { c.Rel.Documents = v })},
	},
	"Document": {
		"account": {toOne(0, "account_id", func(d *model.Document) *string { return &d.AccountID },
			func(l *Loaders) *Loader[*model.Account] { return l.AccountByID },
			func(d *model.Document, v *model.Account) { d.Rel.Account = v })},
		"user": {toOne(1, "user_id", func(d *model.Document) *string { return d.UserID }, userByID,
			func(d *model.Document, v *model.User) { d.Rel.User = v })},
		"emailSubmission": {toOne(2, "email_submission_id", func(d *model.Document) *string { return d.EmailSubmissionID },
			func(l *Loaders) *Loader[*model.EmailSubmission] { return l.EmailSubmissionByID },
			func(d *model.Document, v *model.EmailSubmission) { d.Rel.EmailSubmission = v })},
		"lastDocumentRepresentation": {toOne(3, "last_document_representation_id", func(d *model.Document) *string { return d.LastDocumentRepresentationID },
			func(l *Loaders) *Loader[*model.DocumentRepresentation] {
				return l.DocumentRepresentationByID
			},
			func(d *model.Document, v *model.DocumentRepresentation) { d.Rel.LastDocumentRepresentation = v })},
		"shipments": {toMany(4, func(d *model.Document) string { return d.ID }, func(l *Loaders) *Loader[[]*model.Shipment] { return l.ShipmentsByDocumentID },
			func(d *model.Document, v []*model.Shipment) { d.Rel.Shipments = v })},
		"cargos": {toMany(5, func(d *model.Document) string { return d.ID }, func(l *Loaders) *Loader[[]*model.Container] { return l.ContainersByDocumentID },
			func(d *model.Document, v []*model.Container) { d.Rel.Cargos = v })},
	},
	"EmailSubmission": {
		"account": {toOne(0, "account_id", func(e *model.EmailSubmission) *string { return &e.AccountID },
			func(l *Loaders) *Loader[*model.Account] { return l.AccountByID },
			func(e *model.EmailSubmission, v *model.Account) { e.Rel.Account = v })},
		"user": {toOne(1, "user_id", func(e *model.EmailSubmission) *string { return e.UserID }, userByID,
			func(e *model.EmailSubmission, v *model.User) { e.Rel.User = v })},
		"documents": {toMany(2, func(e *model.EmailSubmission) string { return e.ID },
			func(l *Loaders) *Loader[[]*model.Document] { return l.DocumentsByEmailSubmissionID },
			func(e *model.EmailSubmission, v []*model.Document) { e.Rel.Documents = v })},
	},
	"Terminal": {
		"port": {toOne(0, "port_id", func(t *model.Terminal) *string { return &t.PortID }, portByID,
			func(t *model.Terminal, v *model.Port) { t.Rel.Port = v })},
	},
	"RailTerminal": {
		"port": {toOne(0, "port_id", func(t *model.RailTerminal) *string { return t.PortID }, portByID,
			func(t *model.RailTerminal, v *model.Port) { t.Rel.Port = v })},
		"metroArea": {toOne(1, "metro_area_id", func(t *model.RailTerminal) *string { return t.MetroAreaID }, metroAreaByID,
			func(t *model.RailTerminal, v *model.MetroArea) { t.Rel.MetroArea = v })},
	},
	"CustomField": {
		"definition": {toOne(0, "definition_id", func(c *model.CustomField) *string { return &c.DefinitionID }, definitionByID,
			func(c *model.CustomField, v *model.CustomFieldDefinition) { c.Rel.Definition = v })},
		"entity": {
			toOne(1, "container_id", func(c *model.CustomField) *string { return c.ContainerID },
				func(l *Loaders) *Loader[*model.Container] { return l.ContainerByID },
				func(c *model.CustomField, v *model.Container) { c.Rel.Container = v }),
			toOne(2, "shipment_id", func(c *model.CustomField) *string { return unless(c.ContainerID, c.ShipmentID) },
				func(l *Loaders) *Loader[*model.Shipment] { return l.ShipmentByID },
				func(c *model.CustomField, v *model.Shipment) { c.Rel.Shipment = v }),
		},
	},
	"CustomFieldDefinition": {
		"options": {toMany(0, func(d *model.CustomFieldDefinition) string {
			if !d.DataType.HasOptions() {
				return "" // no options to read; the list is empty
			}
			return d.ID
		}, func(l *Loaders) *Loader[[]*model.CustomFieldOption] {
			return l.OptionsByDefinitionID
		},
			func(d *model.CustomFieldDefinition, v []*model.CustomFieldOption) { d.Rel.Options = v })},
	},
	"CustomFieldOption": {
		"definition": {toOne(0, "definition_id", func(o *model.CustomFieldOption) *string { return &o.DefinitionID }, definitionByID,
			func(o *model.CustomFieldOption, v *model.CustomFieldDefinition) { o.Rel.Definition = v })},
	},
}

// shipmentCustomFields serves customFields and customField(apiSlug).
var shipmentCustomFields = toMany(1, func(s *model.Shipment) string { return s.ID }, customFieldsByEntityID,
	func(s *model.Shipment, v []*model.CustomField) { s.Rel.CustomFields = v })

func portByID(l *Loaders) *Loader[*model.Port]           { return l.PortByID }
func metroAreaByID(l *Loaders) *Loader[*model.MetroArea] { return l.MetroAreaByID }
func terminalByID(l *Loaders) *Loader[*model.Terminal]   { return l.TerminalByID }
func userByID(l *Loaders) *Loader[*model.User]           { return l.UserByID }
func definitionByID(l *Loaders) *Loader[*model.CustomFieldDefinition] {
	return l.DefinitionByID
}
func customFieldsByEntityID(l *Loaders) *Loader[[]*model.CustomField] {
	return l.CustomFieldsByEntityID
}

// typeName is the GraphQL type of a record the plan handles.
func typeName(v any) string {
	switch v.(type) {
	case *model.Shipment:
		return "Shipment"
	case *model.Container:
		return "Container"
	case *model.Document:
		return "Document"
	case *model.EmailSubmission:
		return "EmailSubmission"
	case *model.Terminal:
		return "Terminal"
	case *model.RailTerminal:
		return "RailTerminal"
	case *model.CustomField:
		return "CustomField"
	case *model.CustomFieldDefinition:
		return "CustomFieldDefinition"
	case *model.CustomFieldOption:
		return "CustomFieldOption"
	}
	return "" // no relationships
}

// IsRelation reports whether field of the GraphQL type typ is a
// relationship the plan loads.
func IsRelation(typ, field string) bool { return len(relations[typ][field]) > 0 }

// ToManyFields are the to-many relationships of every type, by GraphQL type
// and field name, for the complexity estimate.
func ToManyFields() map[string][]string {
	out := map[string][]string{}
	for typ, fields := range relations {
		for name, rels := range fields {
			if rels[0].many {
				out[typ] = append(out[typ], name)
			}
		}
	}
	return out
}
