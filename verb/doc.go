// Package verb holds the binary's verbs apart from serving: each parses
// its flags (the settings package config declares for it, plus its own
// arguments) and calls the composition root (package app). Package main
// only picks the verb. Adding a verb is a function here, its constant in
// config (if settings apply to it) and its line in main's table.
package verb

import (
	"flag"
	"io"

	"shipgraph/config"
)

// ErrUsage marks an error already reported by the flag package: exit 2.
var ErrUsage = config.ErrUsage

// flags is a verb's flag set with the settings of v bound.
func flags(name string, v config.Verb) (*flag.FlagSet, *config.Values) {
	fs := flag.NewFlagSet("shipgraph "+name, flag.ContinueOnError)
	return fs, config.Bind(fs, v)
}

// parse parses args (config.Parse): --help on stdout, flag.ErrHelp; a bad
// flag or a stray argument on stderr, ErrUsage.
func parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer, extra bool) error {
	return config.Parse(fs, args, stdout, stderr, extra)
}
