package load

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/vikstrous/dataloadgen"

	"shipgraph/catalog"
)

// TestEveryReadHasALoader: NewLoaders builds a loader for every read of
// the catalogue and stores it in the field of the read's name.
func TestEveryReadHasALoader(t *testing.T) {
	l := NewLoaders(nil, "account", DefaultLoaderConfig)
	v := reflect.ValueOf(l).Elem()
	for _, r := range catalog.Reads() {
		ld := l.reads[r.Index()]
		if ld == nil {
			t.Errorf("%s: no loader", r.Name())
			continue
		}
		f := v.FieldByName(r.Name())
		if !f.IsValid() {
			t.Errorf("%s: no field of Loaders", r.Name())
			continue
		}
		if f.Interface() != any(ld) {
			t.Errorf("%s: the field holds another loader than the plan's", r.Name())
		}
	}
}

// TestLoaderKeepsWhatItRead: LoadAll reads only keys it has not seen, in
// one call of the read; Load answers a key LoadAll read (found or not)
// without reading again, and batches the others through dataloadgen;
// Prime keeps the first value and Clear forgets.
func TestLoaderKeepsWhatItRead(t *testing.T) {
	var reads [][]string
	x := newLoader(func(_ context.Context, ids []string) (map[string]string, error) {
		reads = append(reads, slices.Clone(ids))
		m := map[string]string{}
		for _, id := range ids {
			if id != "missing" {
				m[id] = "v" + id
			}
		}
		return m, nil
	}, LoaderConfig{Wait: time.Millisecond, MaxBatch: 10})
	ctx := context.Background()
	x.Prime("p", "primed")
	got, err := x.LoadAll(ctx, []string{"a", "b", "missing", "p"})
	if err != nil || !maps.Equal(got, map[string]string{"a": "va", "b": "vb", "p": "primed"}) {
		t.Fatalf("LoadAll: %v %v", got, err)
	}
	got, err = x.LoadAll(ctx, []string{"a", "c"})
	if err != nil || !maps.Equal(got, map[string]string{"a": "va", "c": "vc"}) {
		t.Fatalf("second LoadAll: %v %v", got, err)
	}
	if v, err := x.Load(ctx, "b"); v != "vb" || err != nil {
		t.Errorf("Load(b) = %q, %v", v, err)
	}
	if _, err := x.Load(ctx, "missing"); !errors.Is(err, dataloadgen.ErrNotFound) {
		t.Errorf("Load(missing): %v; want not found", err)
	}
	want := [][]string{{"a", "b", "missing"}, {"c"}}
	if !slices.EqualFunc(reads, want, slices.Equal) {
		t.Fatalf("reads %v; want %v", reads, want)
	}
	if v, err := x.Load(ctx, "d"); v != "vd" || err != nil { // unread: through dataloadgen
		t.Errorf("Load(d) = %q, %v", v, err)
	}
	x.Prime("a", "other")
	x.Clear("c")
	got, err = x.LoadAll(ctx, []string{"a", "c", "d"})
	if err != nil || !maps.Equal(got, map[string]string{"a": "va", "c": "vc", "d": "vd"}) {
		t.Fatalf("LoadAll after Clear: %v %v", got, err)
	}
	want = append(want, []string{"d"}, []string{"c"})
	if !slices.EqualFunc(reads, want, slices.Equal) {
		t.Errorf("reads %v; want %v", reads, want)
	}
}

// TestLoadAllChecksTheRequestInsteadOfWatchingIt: a batch read gets a
// context that cannot be cancelled (no per-statement watcher goroutines)
// but keeps the request's values, and a request already cancelled reads
// nothing, before the first chunk or between chunks.
func TestLoadAllChecksTheRequestInsteadOfWatchingIt(t *testing.T) {
	type key struct{}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "req"))
	var reads [][]string
	x := newLoader(func(rctx context.Context, ids []string) (map[string]string, error) {
		if rctx.Done() != nil {
			t.Errorf("read of %v under a cancellable context", ids)
		}
		if rctx.Value(key{}) != "req" {
			t.Errorf("read of %v lost the request's values", ids)
		}
		reads = append(reads, slices.Clone(ids))
		if len(reads) == 1 {
			cancel() // the client leaves during the first chunk
		}
		m := map[string]string{}
		for _, id := range ids {
			m[id] = "v" + id
		}
		return m, nil
	}, LoaderConfig{Wait: time.Millisecond, MaxBatch: 2})
	if _, err := x.LoadAll(ctx, []string{"a", "b", "c"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("LoadAll after the request ended: %v; want context.Canceled", err)
	}
	if want := [][]string{{"a", "b"}}; !slices.EqualFunc(reads, want, slices.Equal) {
		t.Fatalf("reads %v; want %v (none after the cancel)", reads, want)
	}
	if _, err := x.LoadAll(ctx, []string{"d"}); !errors.Is(err, context.Canceled) || len(reads) != 1 {
		t.Fatalf("LoadAll on a cancelled request: %v, %d reads; want context.Canceled and no read", err, len(reads))
	}
}
