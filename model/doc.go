// Package model is Shipgraph's domain: the records (shipments, containers,
// documents, terminals, ports, custom fields …), their filters, orders,
// pages and cursors, the coded error type every layer returns, and the
// principal of a request. It imports nothing of Shipgraph's, so the store,
// the resolver layer and both APIs can all speak it.
//
// The relationships a record carries once the load plan attached them live
// in its Rel (rel.go); gqlgen binds the accessor methods there, and /v2
// reads them through the catalogue. models_gen.go is gqlgen's and is never
// edited by hand.
//
// A record's /v2 attributes are declared on its fields: `jsonapi:"name"`
// (options omitempty and nonnull; a dotted name is a member of a nested
// object), written in the order of the fields, so the tagged fields of a
// type stand in the order /v2 shows them. tools/attrgen derives rest's
// attribute structs, copies and writers from the tags (make generate);
// model itself never reads them.
package model
