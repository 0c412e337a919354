package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The committed files are what the model's tags generate: a tag changed
// without `make generate` fails here (and in make check-generate).
func TestGeneratedFilesAreCurrent(t *testing.T) {
	src, test, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	views, err := generateViews()
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][]byte{out: src, testOut: test, viewsOut: views} {
		got, err := os.ReadFile(filepath.Join("..", "..", path))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run make generate", path)
		}
	}
}

// Tags the generator cannot honour are errors, not silently odd output.
func TestBadTags(t *testing.T) {
	type omitOnTime struct {
		At *int `jsonapi:"at,omitempty"`
	}
	type nonnullString struct {
		S string `jsonapi:"s,nonnull"`
	}
	type unknownOption struct {
		S string `jsonapi:"s,sometimes"`
	}
	type groupOfValues struct {
		S string `jsonapi:"g.s"`
	}
	type twice struct {
		A string `jsonapi:"a"`
		B string `jsonapi:"a"`
	}
	type noWriter struct {
		C chan int `jsonapi:"c"`
	}
	for _, v := range []any{omitOnTime{}, nonnullString{}, unknownOption{}, groupOfValues{}, twice{}, noWriter{}} {
		var b bytes.Buffer
		if err := generateOne(&b, "x", v); err == nil {
			t.Errorf("%T: no error", v)
		}
	}
}

// A list element the list writers cannot write is an error too.
func TestBadListElements(t *testing.T) {
	type intField struct {
		N int `json:"n"`
	}
	type untagged struct {
		S string
	}
	type omitted struct {
		S *string `json:"s,omitempty"`
	}
	for _, v := range []any{intField{}, untagged{}, omitted{}} {
		var b bytes.Buffer
		if err := writeListWriter(&b, reflect.TypeOf(v)); err == nil {
			t.Errorf("%T: no error", v)
		}
	}
}
