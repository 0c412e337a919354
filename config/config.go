package config

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Kind is how a setting's text is read.
type Kind int

const (
	// String is taken as it is.
	String Kind = iota
	// Bool is on only for the exact text "true" in the environment
	// (anything else is off); a flag takes what package flag takes.
	Bool
	// Int is a decimal integer; an environment value that does not parse
	// falls back to the default.
	Int
	// Duration is a time.ParseDuration text; an environment value that does
	// not parse falls back to the default.
	Duration
)

// Verb is a set of the binary's verbs; a setting applies to those in its
// set. Adding a verb is a constant here and its name in verbNames.
type Verb uint

const (
	Serve Verb = 1 << iota
	Migrate
	Seed
	Token
	Psql
	// MCP is the stdio MCP proxy (shipgraph mcp): it opens no database.
	MCP
)

// AllVerbs is every verb that opens the database.
const AllVerbs = Serve | Migrate | Seed | Token | Psql

var verbNames = []struct {
	v    Verb
	name string
}{{Serve, "serve"}, {Migrate, "migrate"}, {Seed, "seed"}, {Token, "token"}, {Psql, "psql"}, {MCP, "mcp"}}

// String names the verbs of the set ("every verb" for AllVerbs).
func (v Verb) String() string {
	if v&AllVerbs == AllVerbs {
		return "every verb"
	}
	var names []string
	for _, n := range verbNames {
		if v&n.v != 0 {
			names = append(names, "`"+n.name+"`")
		}
	}
	return strings.Join(names, ", ")
}

// Setting is one declared setting.
type Setting struct {
	// Env is the environment variable; for a Family, the prefix its
	// members share (e.g. "OTEL_").
	Env string
	// Flag is the flag of the same setting, without dashes: the variable's
	// name in lower case with dashes (GRAPHQL_COST_BUDGET:
	// graphql-cost-budget); empty: the environment only (GOGC, families).
	Flag string
	// Aliases are former names of the flag, still read, not shown in help.
	Aliases []string
	Kind    Kind
	// Default is the value when neither the flag nor the variable says
	// otherwise, as text of Kind.
	Default string
	// ShownDefault, when set, is what the settings table shows for the default
	// (markdown), when the text alone would mislead (0 meaning a computed
	// value, say).
	ShownDefault string
	// Verbs are the verbs that read the setting.
	Verbs Verb
	// Family marks a family of variables sharing the prefix Env (no flag);
	// Shown is how the settings table names them (e.g. "`CARRIER_<SCAC>_*`").
	Family bool
	Shown  string
	// Meaning is what the setting does, in markdown (the settings table's text);
	// the flag's help is the same text without the markdown.
	Meaning string
}

var all []*Setting

// declare adds s to the table, in the settings table's order.
func declare(s Setting) *Setting {
	p := &s
	if s.Family && s.Flag != "" {
		panic("config: a family has no flag: " + s.Env)
	}
	if !s.Family {
		if _, err := parse(p, s.Default); err != nil {
			panic(fmt.Sprintf("config: default of %s: %v", s.Env, err))
		}
	}
	for _, o := range all {
		if o.Env == s.Env || (s.Flag != "" && o.Flag == s.Flag) {
			panic("config: declared twice: " + s.Env)
		}
	}
	all = append(all, p)
	return p
}

// All is every declared setting, in declaration order.
func All() []*Setting { return append([]*Setting(nil), all...) }

// parse reads text as s.Kind.
func parse(s *Setting, text string) (any, error) {
	switch s.Kind {
	case Bool:
		return strconv.ParseBool(text)
	case Int:
		return strconv.ParseInt(text, 10, 64)
	case Duration:
		return time.ParseDuration(text)
	}
	return text, nil
}

// fromEnv is the setting's value from the environment, or its default:
// booleans are on only for exactly "true"; numbers and durations that do
// not parse fall back to the default.
func fromEnv(s *Setting, lookup func(string) (string, bool)) any {
	def, _ := parse(s, s.Default)
	text, ok := lookup(s.Env)
	if !ok {
		return def
	}
	if s.Kind == Bool {
		return text == "true"
	}
	if v, err := parse(s, text); err == nil {
		return v
	}
	return def
}

// Values are the settings of one verb, read from its flags over the
// environment over the defaults.
type Values struct {
	verb   Verb
	vals   map[*Setting]*value
	lookup func(string) (string, bool)
}

// value is a setting's flag.Value.
type value struct {
	s *Setting
	v any
}

func (v *value) String() string {
	if v == nil || v.s == nil {
		return ""
	}
	if d, ok := v.v.(time.Duration); ok {
		return d.String()
	}
	return fmt.Sprint(v.v)
}

func (v *value) Set(text string) error {
	x, err := parse(v.s, text)
	if err != nil {
		return errors.New("parse error")
	}
	v.v = x
	return nil
}

func (v *value) IsBoolFlag() bool { return v.s.Kind == Bool }

// Bind registers on fs the flags of every setting verb reads, each
// defaulting to its environment variable (then its declared default), and
// returns their values, complete once fs has parsed. The verb's --help
// lists the flags, then the variables read from the environment only.
func Bind(fs *flag.FlagSet, verb Verb) *Values {
	return bind(fs, verb, os.LookupEnv)
}

func bind(fs *flag.FlagSet, verb Verb, lookup func(string) (string, bool)) *Values {
	vs := &Values{verb: verb, vals: map[*Setting]*value{}, lookup: lookup}
	var envOnly []*Setting
	for _, s := range all {
		if s.Verbs&verb == 0 {
			continue
		}
		if s.Flag == "" {
			envOnly = append(envOnly, s)
			continue
		}
		v := &value{s: s, v: fromEnv(s, lookup)}
		vs.vals[s] = v
		fs.Var(v, s.Flag, Help(s))
		for _, a := range s.Aliases {
			fs.Var(v, a, "")
		}
	}
	fs.Usage = func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage of %s:\n", fs.Name())
		fs.VisitAll(func(f *flag.Flag) {
			v, ok := f.Value.(*value)
			if !ok { // a verb's own argument
				printFlag(out, f)
				return
			}
			if f.Name != v.s.Flag {
				return // a former name
			}
			kind := [...]string{String: " string", Bool: "", Int: " int", Duration: " duration"}[v.s.Kind]
			def := ""
			switch {
			case v.s.ShownDefault != "":
				def = fmt.Sprintf(" (default %s)", shownDefault(v.s.ShownDefault))
			case f.DefValue != "" && !(v.s.Kind == Bool && f.DefValue == "false"):
				def = fmt.Sprintf(" (default %s)", f.DefValue)
			}
			fmt.Fprintf(out, "  --%s%s\n    \t%s%s\n", f.Name, kind, f.Usage, def)
		})
		if len(envOnly) > 0 {
			fmt.Fprintf(out, "\nRead from the environment only:\n")
			for _, s := range envOnly {
				fmt.Fprintf(out, "  %s\n    \t%s\n", name(s), Help(s))
			}
		}
	}
	return vs
}

// get is s's value; s must apply to the verb.
func (vs *Values) get(s *Setting, k Kind) any {
	if s.Kind != k {
		panic(fmt.Sprintf("config: %s is not read as kind %d", s.Env, k))
	}
	if v, ok := vs.vals[s]; ok {
		return v.v
	}
	if s.Verbs&vs.verb != 0 && s.Flag == "" {
		return fromEnv(s, vs.lookup)
	}
	panic(fmt.Sprintf("config: %s does not apply to verb %s: declare it for the verb", s.Env, vs.verb))
}

// Applies reports whether s applies to the verb of vs.
func (vs *Values) Applies(s *Setting) bool { return s.Verbs&vs.verb != 0 }

// String is the value of a String setting.
func (vs *Values) String(s *Setting) string { return vs.get(s, String).(string) }

// Bool is the value of a Bool setting.
func (vs *Values) Bool(s *Setting) bool { return vs.get(s, Bool).(bool) }

// Int is the value of an Int setting.
func (vs *Values) Int(s *Setting) int { return int(vs.get(s, Int).(int64)) }

// Int64 is the value of an Int setting.
func (vs *Values) Int64(s *Setting) int64 { return vs.get(s, Int).(int64) }

// Duration is the value of a Duration setting.
func (vs *Values) Duration(s *Setting) time.Duration { return vs.get(s, Duration).(time.Duration) }

// Family is the members of a family that are set, by the rest of their
// names after the prefix (CARRIER_MAEU_TOKEN → "MAEU_TOKEN").
func (vs *Values) Family(s *Setting) map[string]string {
	if !s.Family {
		panic("config: not a family: " + s.Env)
	}
	m := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if rest, ok := strings.CutPrefix(k, s.Env); ok && rest != "" {
			m[rest] = v
		}
	}
	return m
}

// Set overrides a setting for this verb (tests and defaults that depend on
// another setting).
func (vs *Values) Set(s *Setting, text string) error {
	v, ok := vs.vals[s]
	if !ok {
		return fmt.Errorf("config: %s has no flag for this verb", s.Env)
	}
	return v.Set(text)
}

// name is how the settings table and --help name s.
func name(s *Setting) string {
	if s.Shown != "" {
		return strings.ReplaceAll(s.Shown, "`", "")
	}
	return s.Env
}

var (
	mdRef  = regexp.MustCompile(`\s*\(\[[^\]]*\]\([^)]*\)\)`) // " ([scale](docs/scale.md))"
	mdLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	mdMark = strings.NewReplacer("`", "", "**", "", "*", "")
)

// Help is s's meaning as plain text, with its variable: a flag's help.
func Help(s *Setting) string {
	text := mdMark.Replace(mdLink.ReplaceAllString(mdRef.ReplaceAllString(s.Meaning, ""), "$1"))
	return fmt.Sprintf("%s (%s)", text, name(s))
}

// Markdown is the settings table (docs/settings.md), derived from the
// declaration: variable, flag, default, the verbs that read it, meaning.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| Variable | Flag | Default | Verbs | Meaning |\n|---|---|---|---|---|\n")
	for _, s := range all {
		n := "`" + s.Env + "`"
		if s.Shown != "" {
			n = s.Shown
		}
		fl := ""
		if s.Flag != "" {
			fl = "`--" + s.Flag + "`"
		}
		def := s.ShownDefault
		if def == "" {
			def = "*(empty)*"
			if s.Default != "" {
				def = "`" + s.Default + "`"
			}
		}
		// Meanings link from the repository's root (docs/x.md); the
		// table lives in docs/.
		meaning := strings.ReplaceAll(s.Meaning, "](docs/", "](")
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", n, fl, def, s.Verbs, meaning)
	}
	return b.String()
}

// The settings table (docs/settings.md) stands between these two lines.
const (
	BeginMarker = "<!-- settings: generated from config/settings.go by `make settings`; do not edit -->"
	EndMarker   = "<!-- settings: end -->"
)

// ReplaceTable returns readme with the text between the markers replaced
// by Markdown(); ok is false when the markers are missing.
func ReplaceTable(readme string) (out string, ok bool) {
	i := strings.Index(readme, BeginMarker)
	j := strings.Index(readme, EndMarker)
	if i < 0 || j < i {
		return readme, false
	}
	return readme[:i+len(BeginMarker)] + "\n" + Markdown() + readme[j:], true
}

// ErrUsage marks a bad command line already reported on stderr: exit 2.
var ErrUsage = errors.New("usage")

// Parse parses a verb's args: --help prints the usage on stdout and
// returns flag.ErrHelp; a bad flag or (unless extra) a stray argument is
// reported on stderr with the usage, and returns ErrUsage.
func Parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer, extra bool) error {
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	if errors.Is(err, flag.ErrHelp) {
		_, _ = stdout.Write(buf.Bytes())
		return err
	}
	_, _ = stderr.Write(buf.Bytes())
	if err != nil {
		return ErrUsage
	}
	if !extra && fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return ErrUsage
	}
	return nil
}

// DashUsage sets fs's usage to list its flags with two dashes, as the
// verbs' flags are written, with their defaults (a verb with no settings:
// carrier-sim).
func DashUsage(fs *flag.FlagSet) {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage of %s:\n", fs.Name())
		fs.VisitAll(func(f *flag.Flag) { printFlag(fs.Output(), f) })
	}
}

// printFlag writes one flag of a verb's own, with its default when it
// has one.
func printFlag(out io.Writer, f *flag.Flag) {
	kind, usage := flag.UnquoteUsage(f)
	if kind != "" {
		kind = " " + kind
	}
	def := ""
	if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
		def = fmt.Sprintf(" (default %s)", f.DefValue)
	}
	fmt.Fprintf(out, "  --%s%s\n    \t%s%s\n", f.Name, kind, usage, def)
}

// shownDefault is a ShownDefault as plain text: "`0` (4 ×
// `CHANGE_LOG_RETENTION`)" reads "0: 4 × CHANGE_LOG_RETENTION".
func shownDefault(md string) string {
	t := strings.NewReplacer("`", "", "*", "").Replace(md)
	if strings.HasPrefix(t, "(") && strings.HasSuffix(t, ")") {
		return t[1 : len(t)-1]
	}
	if v, rest, ok := strings.Cut(t, " ("); ok && strings.HasSuffix(rest, ")") {
		return v + ": " + rest[:len(rest)-1]
	}
	return t
}
