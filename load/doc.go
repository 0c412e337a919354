// Package load reads relationships in batches for one request: the
// per-request dataloadgen loaders (built after authentication, scoped to
// the principal's account, stored in the context), the load plan that
// says which relationships each level of a response needs and runs them
// level by level — one statement per relationship and level, whatever the
// page size — and the column narrowing that makes the store read only the
// columns a request shows. It speaks the catalogue's terms (a relationship
// is a *catalog.Rel, an attribute a column of a *catalog.Resource), never an
// API's names: GraphQL builds its plans from selections (graph), /v2 from
// include and fields[type] (rest), each translating its own names; both
// hand them to resolve, which runs them here.
package load
