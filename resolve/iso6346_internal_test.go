package resolve

import "testing"

func TestContainerCheckDigit(t *testing.T) {
	for _, c := range []struct {
		number string
		valid  bool
	}{
		{"CSQU3054383", true}, // ISO 6346's own example
		{"MSCU1234566", true},
		{"WHLU1234560", true}, // the OpenAPI document's example
		{"CSQU3054384", false},
		{"CSQA3054383", false}, // category must be U, J or Z
		{"CSQU305438", false},
		{"1SQU3054383", false},
	} {
		if got := validContainerNumber(c.number); got != c.valid {
			t.Errorf("%s: valid %v, want %v (check digit %d)", c.number, got, c.valid, containerCheckDigit(c.number))
		}
	}
}
