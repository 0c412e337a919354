package main

// The query fast path: a gqlgen plugin that writes, for every object,
// interface and marshalled type a query can reach, a function that writes
// the selected fields of a value straight into one JSON buffer
// (graph/executor/fastpath.gen.go), for graph/executor/fastpath.go to run before gqlgen's
// executor.
//
// gqlgen's executor pays per field: a field context, a context value, a
// closure for the resolver middleware, a boxed result and a marshaller
// closure, which made gqlgen's own machinery the largest cost of a
// dashboard page once its data was loaded in a few statements. The
// functions written here read the same Go fields and methods gqlgen's
// generated code reads (the binding is gqlgen's: codegen.Data, after its
// autobind and gqlgen.yml mapping), call the same resolvers with the same
// argument coercion, and write the same bytes through the same marshallers,
// but without the per-field machinery.
//
// Anything they do not handle returns false, and the operation is run by
// gqlgen's executor instead: errors of any kind (a resolver's, an argument's,
// null in a non-null position), @defer, introspection, fields with
// directives, batch resolvers, maps and streams, and federation's _entities
// and _service (methods of gqlgen's own execution context, federation.go).
// Queries only read, so running a refused operation again costs time, never
// correctness.

import (
	"fmt"
	"go/types"
	"sort"
	"strings"
	"text/template"

	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/99designs/gqlgen/codegen/templates"
)

type fastPath struct{ filename string }

func (fastPath) Name() string { return "fastpath" }

const fastPathTemplate = `
{{ reserveImport "context" }}
{{ reserveImport "reflect" }}
{{ reserveImport "github.com/99designs/gqlgen/graphql" }}
{{ reserveImport "github.com/vektah/gqlparser/v2/ast" }}
{{ fastpath . }}
`

func (p fastPath) GenerateCode(data *codegen.Data) error {
	g := &fastGen{data: data, writers: map[string]bool{}, objects: map[string]bool{}}
	return templates.Render(templates.Options{
		PackageName:     data.Config.Exec.Package,
		Filename:        p.filename,
		GeneratedHeader: true,
		Data:            data,
		Funcs:           template.FuncMap{"fastpath": g.render},
		Template:        fastPathTemplate,
		Packages:        data.Config.Packages,
	})
}

// fastGen writes the file: the query root, then every writer and object
// function it reaches, each once.
type fastGen struct {
	data    *codegen.Data
	out     strings.Builder
	writers map[string]bool // writer functions written or queued, by name
	objects map[string]bool // object and interface functions, by GraphQL name
	queue   []func()
}

func (g *fastGen) printf(format string, args ...any) { fmt.Fprintf(&g.out, format, args...) }

func ref(t types.Type) string { return templates.CurrentImports.LookupType(t) }

func (g *fastGen) render(*codegen.Data) (string, error) {
	g.printf("// fastUnmarshalers is the input unmarshaler map gqlgen's Exec puts in the\n")
	g.printf("// context for argument coercion.\n")
	g.printf("func (ec *executionContext) fastUnmarshalers() map[reflect.Type]reflect.Value {\n")
	g.printf("\treturn graphql.BuildUnmarshalerMap(\n")
	for _, in := range g.data.Inputs {
		// The inputs of a built-in source (federation's entity resolver
		// inputs) are no field's argument: leaving them out keeps the
		// map, built per operation, as small as the schema's own.
		if builtIn := in.Definition.Position != nil && in.Definition.Position.Src != nil && in.Definition.Position.Src.BuiltIn; !in.HasUnmarshal() && !builtIn {
			g.printf("\t\tec.unmarshalInput%s,\n", in.Name)
		}
	}
	g.printf("\t)\n}\n\n")

	q := g.data.QueryRoot
	fieldDirectives := len(g.data.AllDirectives.LocationDirectives("FIELD")) > 0
	g.printf("// fastQueryRoot is what the query root satisfies, for field collection.\n")
	g.printf("var fastQueryRoot = %sImplementors\n\n", templates.LcFirst(q.Name))
	g.printf("// rootField writes the value of one field of the query root; false\n")
	g.printf("// hands the operation to gqlgen.\n")
	g.printf("func (f *fastWriter) rootField(field graphql.CollectedField) bool {\n")
	if fieldDirectives {
		g.printf("\treturn false\n}\n")
		return g.out.String(), nil
	}
	g.printf("\tswitch field.Name {\n")
	g.printf("\tcase \"__typename\":\n\t\tf.str(%q)\n\t\treturn true\n", q.Name)
	var roots []*codegen.Field
	for _, fl := range q.Fields {
		if g.supported(fl) {
			roots = append(roots, fl)
			g.printf("\tcase %q:\n\t\treturn f.%s(field)\n", fl.Name, rootFunc(fl))
		}
	}
	g.printf("\t}\n\treturn false\n}\n")
	for _, fl := range roots {
		g.rootField(fl)
	}
	for len(g.queue) > 0 {
		next := g.queue[0]
		g.queue = g.queue[1:]
		next()
	}
	return g.out.String(), nil
}

func rootFunc(fl *codegen.Field) string { return "root_" + fl.Object.Name + "_" + fl.Name }

// supported says whether a field is read the plain way: a Go field, a
// method or a resolver, with no directive, batching, map or stream.
func (g *fastGen) supported(fl *codegen.Field) bool {
	switch {
	case fl.IsReserved(), fl.HasDirectives(), len(fl.ImplDirectives()) > 0,
		fl.IsBatch(), fl.IsMap(), fl.Stream, fl.VOkFunc, fl.HasHaser, fl.TypeReference == nil:
		return false
	case fl.IsResolver:
		return true
	case fl.IsMethod():
		return fl.GoReceiverName == "obj"
	case fl.IsVariable():
		return fl.GoReceiverName == "obj"
	}
	return false
}

// rootField writes the function for one field of the query root: the
// field and root-field contexts gqlgen's _Query sets, the arguments by
// gqlgen's coercion, the resolver, then the value's writer.
func (g *fastGen) rootField(fl *codegen.Field) {
	w := g.writer(fl.TypeReference)
	g.printf("\nfunc (f *fastWriter) %s(field graphql.CollectedField) bool {\n", rootFunc(fl))
	g.printf("\tctx := graphql.WithRootFieldContext(f.ctx, &graphql.RootFieldContext{Object: field.Name, Field: field})\n")
	g.printf("\tfc, err := f.ec.%s(ctx, field)\n\tif err != nil {\n\t\treturn false\n\t}\n", fl.FieldContextFunc())
	g.printf("\tctx = graphql.WithFieldContext(ctx, fc)\n")
	g.printf("\tv, err := f.ec.Resolvers.%s\n\tif err != nil {\n\t\treturn false\n\t}\n", fl.ShortInvocation())
	g.printf("\treturn f.%s(field.Selections, v)\n}\n", w)
}

// writer queues (once) and names the function writing a value of t: the
// same cases, in the same order, as gqlgen's marshal function for t.
func (g *fastGen) writer(t *config.TypeReference) string {
	name := "fw" + strings.TrimPrefix(t.MarshalFunc(), "marshal")
	if g.writers[name] {
		return name
	}
	g.writers[name] = true
	g.queue = append(g.queue, func() { g.writeWriter(name, t) })
	return name
}

func (g *fastGen) writeWriter(name string, t *config.TypeReference) {
	null := "\t\tf.null()\n\t\treturn true\n"
	if t.GQL.NonNull {
		null = "\t\treturn false\n"
	}
	g.printf("\nfunc (f *fastWriter) %s(sel ast.SelectionSet, v %s) bool {\n", name, ref(t.GO))
	defer g.printf("}\n")
	switch {
	case t.IsPtrToSlice(), t.IsPtrToIntf():
		g.printf("\tif v == nil {\n%s\t}\n\treturn f.%s(sel, *v)\n", null, g.writer(t.Elem()))
	case t.IsSlice():
		if !t.GQL.NonNull {
			g.printf("\tif v == nil {\n\t\tf.null()\n\t\treturn true\n\t}\n")
		}
		g.printf("\tf.w.b = append(f.w.b, '[')\n\tfor i := range v {\n\t\tif i > 0 {\n\t\t\tf.w.b = append(f.w.b, ',')\n\t\t}\n")
		g.printf("\t\tif !f.%s(sel, v[i]) {\n\t\t\treturn false\n\t\t}\n\t}\n\tf.w.b = append(f.w.b, ']')\n\treturn true\n", g.writer(t.Elem()))
	case t.IsPtrToPtr() && t.Unmarshaler == nil && !t.IsMarshaler:
		g.printf("\tif v == nil {\n%s\t}\n\treturn f.%s(sel, *v)\n", null, g.writer(t.Elem()))
	default:
		if t.IsNilable() {
			g.printf("\tif v == nil {\n%s\t}\n", null)
		}
		switch {
		case t.IsMarshaler && t.IsContext:
			g.printf("\treturn v.MarshalGQLContext(f.ctx, &f.w) == nil\n")
		case t.IsMarshaler:
			g.printf("\tv.MarshalGQL(&f.w)\n\treturn true\n")
		case t.Marshaler != nil:
			g.scalar(t, null)
		case t.IsRoot:
			g.printf("\treturn false\n")
		default:
			amp := "&"
			if t.IsNilable() {
				amp = ""
			}
			g.printf("\treturn f.%s(sel, %sv)\n", g.object(t.Definition.Name), amp)
		}
	}
}

// scalar writes a value through its marshal function. gqlgen's own string,
// boolean, integer and time marshallers are written in place, byte for
// byte as they write (graph/fastpath.go); any other goes through its
// marshaller.
func (g *fastGen) scalar(t *config.TypeReference, null string) {
	v := "v"
	switch {
	case t.IsTargetNilable() && !t.IsNilable():
		v = "&v"
	case !t.IsTargetNilable() && t.IsNilable():
		v = "*v"
	}
	switch {
	case t.HasEnumValues():
		v = fmt.Sprintf("%s[%s]", t.EnumMarshalVar(false), v)
	case t.CastType != nil:
		v = fmt.Sprintf("%s(%s)", ref(t.CastType), v)
	}
	m := t.Marshaler
	name := ""
	if m.Pkg() != nil {
		name = m.Pkg().Path() + "." + m.Name()
	}
	if gqlgenMarshaler[name] != "" && !t.IsContext {
		switch gqlgenMarshaler[name] {
		case "MarshalString", "MarshalID":
			g.printf("\tf.str(%s)\n\treturn true\n", v)
			return
		case "MarshalBoolean":
			g.printf("\tf.bool(%s)\n\treturn true\n", v)
			return
		case "MarshalInt", "MarshalInt8", "MarshalInt16", "MarshalInt32", "MarshalInt64":
			g.printf("\tf.int(int64(%s))\n\treturn true\n", v)
			return
		case "MarshalTime":
			g.printf("\tif t := %s; !t.IsZero() {\n\t\tf.time(t)\n\t\treturn true\n\t}\n%s", v, strings.ReplaceAll(null, "\t\t", "\t"))
			return
		}
	}
	call := templates.Call(m) + "(" + v + ")"
	if t.IsContext {
		g.printf("\treturn %s.MarshalGQLContext(f.ctx, &f.w) == nil\n", call)
		return
	}
	g.printf("\tres := %s\n\tif res == graphql.Null {\n%s\t}\n\tres.MarshalGQL(&f.w)\n\treturn true\n", call, null)
}

// gqlgenMarshaler names the marshallers the fast path writes in place by
// the gqlgen marshaller they are: gqlgen's own, and the model's bound
// wrappers that return gqlgen's (model.MarshalString, model.MarshalID),
// which would otherwise go through a graphql.Marshaler and an io.Writer
// for every string of a response.
var gqlgenMarshaler = map[string]string{
	"shipgraph/model.MarshalString": "MarshalString",
	"shipgraph/model.MarshalID":     "MarshalID",
}

func init() {
	for _, n := range []string{"MarshalString", "MarshalID", "MarshalBoolean", "MarshalInt", "MarshalInt8",
		"MarshalInt16", "MarshalInt32", "MarshalInt64", "MarshalTime"} {
		gqlgenMarshaler["github.com/99designs/gqlgen/graphql."+n] = n
	}
}

// object queues (once) and names the function writing an object or an
// interface (or union) of the schema.
func (g *fastGen) object(name string) string {
	fn := "o_" + name
	if g.objects[name] {
		return fn
	}
	g.objects[name] = true
	if i, ok := g.data.Interfaces[name]; ok {
		g.queue = append(g.queue, func() { g.writeInterface(fn, i) })
		return fn
	}
	for _, o := range g.data.Objects {
		if o.Name == name {
			g.queue = append(g.queue, func() { g.writeObject(fn, o) })
			return fn
		}
	}
	panic("fastpath: no object or interface " + name)
}

func (g *fastGen) writeInterface(fn string, i *codegen.Interface) {
	g.printf("\nfunc (f *fastWriter) %s(sel ast.SelectionSet, obj %s) bool {\n", fn, ref(i.Type))
	g.printf("\tswitch obj := (obj).(type) {\n")
	impls := append([]codegen.InterfaceImplementor(nil), i.Implementors...)
	sort.SliceStable(impls, func(a, b int) bool { return impls[a].Name < impls[b].Name })
	for _, impl := range impls {
		g.printf("\tcase %s:\n", ref(impl.Type))
		if impl.CanBeNil() {
			g.printf("\t\tif obj == nil {\n\t\t\treturn false\n\t\t}\n")
		}
		amp := ""
		if impl.TakeRef {
			amp = "&"
		}
		g.printf("\t\treturn f.%s(sel, %sobj)\n", g.object(impl.Name), amp)
	}
	g.printf("\t}\n\treturn false\n}\n")
}

func (g *fastGen) writeObject(fn string, o *codegen.Object) {
	g.printf("\nfunc (f *fastWriter) %s(sel ast.SelectionSet, obj %s) bool {\n", fn, ref(o.Reference()))
	defer g.printf("}\n")
	if o.Root || o.Stream || o.IsMap() {
		g.printf("\treturn false\n")
		return
	}
	g.printf("\tfields, ok := f.fields(sel, %sImplementors)\n\tif !ok {\n\t\treturn false\n\t}\n", templates.LcFirst(o.Name))
	g.printf("\tf.w.b = append(f.w.b, '{')\n\tfor i, field := range fields {\n\t\tf.key(i, field.Alias)\n\t\tswitch field.Name {\n")
	g.printf("\t\tcase \"__typename\":\n\t\t\tf.str(%q)\n", o.Name)
	for _, fl := range o.Fields {
		if !g.supported(fl) {
			continue
		}
		g.printf("\t\tcase %q:\n", fl.Name)
		if fl.IsResolver || len(fl.Args) > 0 {
			g.printf("\t\t\tfc, err := f.ec.%s(f.ctx, field)\n\t\t\tif err != nil {\n\t\t\t\treturn false\n\t\t\t}\n", fl.FieldContextFunc())
			if fl.IsResolver || fl.MethodHasContext {
				g.printf("\t\t\tctx := graphql.WithFieldContext(f.ctx, fc)\n")
			}
		} else if fl.MethodHasContext {
			g.printf("\t\t\tctx := f.ctx\n")
		}
		switch {
		case fl.IsResolver:
			g.printf("\t\t\tv, err := f.ec.Resolvers.%s\n\t\t\tif err != nil {\n\t\t\t\treturn false\n\t\t\t}\n", fl.ShortInvocation())
		case fl.IsMethod() && fl.NoErr:
			g.printf("\t\t\tv := obj.%s(%s)\n", fl.GoFieldName, fl.CallArgs())
		case fl.IsMethod():
			g.printf("\t\t\tv, err := obj.%s(%s)\n\t\t\tif err != nil {\n\t\t\t\treturn false\n\t\t\t}\n", fl.GoFieldName, fl.CallArgs())
		default:
			g.printf("\t\t\tv := obj.%s\n", fl.GoFieldName)
		}
		g.printf("\t\t\tif !f.%s(field.Selections, v) {\n\t\t\t\treturn false\n\t\t\t}\n", g.writer(fl.TypeReference))
	}
	g.printf("\t\tdefault:\n\t\t\treturn false\n\t\t}\n\t}\n\tf.w.b = append(f.w.b, '}')\n\treturn true\n")
}
