// Package sim is a carrier simulator: an HTTP server that answers DCSA Track
// & Trace v2.2 (GET /{SCAC}/v2/events) for several real carriers, with
// deterministic voyages from a seed between real ports, whose planned,
// estimated and actual events appear as the simulator's clock passes them.
// It is a test and demo tool (`shipgraph carrier-sim`); it knows the
// standard and nothing of the connector (carrier/dcsa) that polls it.
//
// Beside the standard it answers GET /sim/numbers (the numbers it knows),
// GET and POST /sim/faults (outages, slowness, broken bodies, per carrier
// and per number) and POST /oauth/token (OAuth2 client credentials).
package sim
