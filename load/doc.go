// Package load reads relationships in batches for one request: the
// per-request dataloadgen loaders (built after authentication, scoped to
// the principal's account, stored in the context), the load plan that
// says which relationships each level of a response needs and runs them
// level by level — one statement per relationship and level, whatever the
// page size — and the column narrowing that makes the store read only the
// columns a request shows. GraphQL builds its plans from selections
// (graph), /v2 from include and fields[type] (rest); both run them here.
package load
