// Package config declares every setting of the shipgraph binary once —
// its environment variable, its flag, its default, its meaning and the
// verbs that read it — in settings.go, and derives the rest from that
// table: the flags of each verb (Bind), the environment parsing, each
// verb's --help, and the settings table of docs/settings.md, which the
// README links to (Markdown; a test fails when the file differs, and `make
// settings` / `go generate ./config` rewrites it).
//
// Adding a setting is one declare(...) in settings.go plus its use (read it
// with Values.String, .Bool, .Int, .Duration where the process is built, in
// package app). A family of variables keyed by a name inside it (the
// OTEL_* variables; per-carrier credentials CARRIER_<SCAC>_*) is one
// declaration with Family set: it has no flag, and Values.Family returns its
// members by the rest of their names.
//
// The package imports nothing of ours, so every layer may read the
// declaration (the composition root does; the packages it configures keep
// their own DefaultConfig for tests, and app's tests hold the two equal).
package config

//go:generate go run ./readme ../docs/settings.md
