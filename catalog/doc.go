// Package catalog is the catalogue of resources and relationships: each
// resource type and each relationship is declared once, in resources.go,
// and everything else derives from it.
//
// A resource gives its GraphQL type, JSON:API type, Go type (from its id
// function) and its read by id. A relationship gives its Rel slot (Go), its
// GraphQL field, its JSON:API member (and include aliases), its
// cardinality and its target type(s): an abstract field
// (Shipment.destination = MetroArea | Port) is one relationship with several
// targets, in order of precedence, each with its key column, key function
// and the store read that batches it; the first target whose key is set
// applies. A to-many relationship may have a linkage-only variant
// (Shipment's containerIDs) that /v2 reads when the records are not
// included.
//
// Derived from it:
//   - load: the load plan, keyed by *Rel (load/plan.go walks the targets),
//     the loaders (one generic constructor, load.bind, per catalogue read;
//     the typed fields of load.Loaders are filled from it), the key columns
//     of column narrowing (load/columns.go, keyed by *Resource);
//   - graph: GraphQL field → Rel (graph/plan.go's relation, the plan names
//     being GraphQL's field names) and the to-many fields of the complexity
//     estimate (ToManyFields, which graph's weighRelations calls);
//   - rest: the include allow-lists and their 400s (includes), the
//     relationship members of fields[type], the linkage of every resource,
//     the load plan of a response (rest/plan.go) and its included resources
//     (a walk over the relationships a shape shows, rendering each target
//     with its type's shape: rest/render.go).
//
// The tests walk the catalogue against schema.graphqls (every relationship
// field of every resource type has an entry and vice versa, with the same
// targets and cardinality) and against the OpenAPI document's relationship
// members (testdata/openapi-schemas.json, a copy of rest/testdata's).
//
// Adding a relationship touches:
//   - schema.graphqls: the field (then make generate);
//   - catalog/resources.go: its entry (and a read, if no existing one
//     batches it);
//   - model/rel.go: its Rel slot and the accessor method gqlgen binds;
//   - only for a new store read: its db method, and its typed field and
//     bind line in load/loaders.go (TestEveryReadHasALoader checks both);
//   - only for a new target resource type in /v2: its shape in
//     rest/render.go and its attributes struct (writers are generated).
//
// Nothing else: the plan, loaders, columns, complexity, includes, fields,
// linkage and included follow. The package imports model and db only.
package catalog
