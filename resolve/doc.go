// Package resolve is the resolver layer both APIs call: the functions that
// read and write records, with their rules and error order.
//
// Reads: list (filter, order, page → one store page, the by-id loaders
// primed with it, then the caller's load plan), count, get by id (not found
// for an unknown, malformed or another account's id), node, viewer. Writes:
// shipments (update, stop and resume tracking), documents (update, delete),
// custom field definitions, options and values (create, update, delete).
// Every write checks, in this order: the key may write (403), a request the
// transport could not read (Invalid marked Malformed: a body of the wrong
// shape, 400), a stricter role where one is needed, the target is the
// account's (404), the input (422: Invalid, which a transport found while
// decoding, then the rules here), then the store (conflicts). Transports
// check no role themselves: they hand over what they could not read.
//
// Functions take the request's principal explicitly, as their second
// parameter (func (r *Resolver) X(ctx, p *model.Principal, …)): the
// transport authenticated it once and built the request's session with
// Session (its loaders, which methods read with load.For); nothing here
// reads the principal from the context. Reads take the caller's load plan
// (Query.Plan, a get's plan argument), built by each API from its own
// request in the catalogue's terms, and run it. Functions take plain query
// and command structs and return records of the model or *model.Error. Errors name the offending input neutrally (Field:
// an attribute name; Parameter: a page argument); each transport renders
// them in its own syntax. gqlgen's resolvers (graph) and the /v2 handlers
// (rest) are thin adapters over this package; it knows neither.
package resolve
