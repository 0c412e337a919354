// Package seeddata embeds the project's copy of the shared reference data
// (real public terminals with FIRMS codes and ports, and shipping lines
// with SCACs and BOL prefixes), for the tools that need the data without
// the store: the carrier simulator reads its carriers and ports from here.
package seeddata

import _ "embed"

// TerminalsCSV is terminals.csv: terminal name, nickname, FIRMS code, port
// name, port code (UN/LOCODE), city, state, country, time zone, support.
//
//go:embed terminals.csv
var TerminalsCSV []byte

// ShippingLinesCSV is shipping_lines.csv: full name, nickname, SCAC, BOL
// prefix, support, notes.
//
//go:embed shipping_lines.csv
var ShippingLinesCSV []byte
