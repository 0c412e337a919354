// Package dcsa speaks DCSA Track & Trace v2.2 as a client: the standard's
// event types as JSON (types.go, with the code tables as constants) and a
// Client that polls a carrier's GET /v2/events by transport document,
// booking or equipment reference, follows the Next-Page cursor and
// classifies every failure for the tracking jobs (ErrNotFound, or an
// *Error whose Kind says Unreachable, Unrecognized, Unauthorized or
// Rejected; see errors.go and docs/carriers.md).
//
// The package knows the standard and nothing else: not our store, not our
// model, not the carrier simulator (carrier/sim) its tests run against.
package dcsa
