package testkit

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schemas is a JSON Schema document that answers are checked against,
// read and compiled once (formats asserted), each of its schemas at first
// use; safe for parallel tests.
type Schemas struct {
	open     func() (io.ReadCloser, error)
	once     sync.Once
	c        *jsonschema.Compiler
	err      error
	compiled sync.Map // ref → *jsonschema.Schema
}

// schemasURL names the document inside its compiler.
const schemasURL = "https://shipgraph.test/schemas.json"

// SchemaFile is the JSON Schema document in the file at path (the OpenAPI
// document's response schemas: rest/testdata/openapi-schemas.json,
// extracted by rest/testdata/extract).
func SchemaFile(path string) *Schemas {
	return &Schemas{open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

// SchemaText is a JSON Schema document given as text.
func SchemaText(text string) *Schemas {
	return &Schemas{open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(text)), nil }}
}

// Validate checks body against the document's schema at ref, a JSON
// pointer ("/$defs/get-documents-200"; "" for the document itself): the
// test fails at once if the document or body is not JSON, and fails
// (going on) if the body does not match.
func (s *Schemas) Validate(tb testing.TB, ref string, body []byte) {
	tb.Helper()
	s.once.Do(func() {
		f, err := s.open()
		if err != nil {
			s.err = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			s.err = err
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if s.err = c.AddResource(schemasURL, doc); s.err == nil {
			s.c = c
		}
	})
	if s.err != nil {
		tb.Fatalf("the schema document: %v", s.err)
	}
	var sch *jsonschema.Schema
	if v, ok := s.compiled.Load(ref); ok {
		sch = v.(*jsonschema.Schema)
	} else {
		var err error
		if sch, err = s.c.Compile(schemasURL + "#" + ref); err != nil {
			tb.Fatalf("schema %q: %v", ref, err)
		}
		s.compiled.Store(ref, sch)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		tb.Fatalf("body is not JSON (%v): %.2000s", err, body)
	}
	if err := sch.Validate(inst); err != nil {
		tb.Errorf("body does not match the schema %q: %v\n%.2000s", ref, err, body)
	}
}
