package load

import (
	"reflect"
	"testing"

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
