package numbers_test

import (
	"testing"

	"shipgraph/carrier/numbers"
)

func TestContainer(t *testing.T) {
	// The standard's own example (CSQU 305438 3) and real boxes.
	for _, n := range []string{"CSQU3054383", "MSKU9070323"} {
		if !numbers.ValidContainer(n) {
			t.Errorf("%s: valid number refused", n)
		}
	}
	for _, n := range []string{"CSQU3054384", "CSQX3054383", "CSQU305438", "csqu3054383", "CSQU30543A3", "", "ÄSQU3054383"} {
		if numbers.ValidContainer(n) {
			t.Errorf("%q: invalid number accepted", n)
		}
	}
	if got := numbers.NormalizeContainer(" csqu 305438-3 "); got != "CSQU3054383" {
		t.Errorf("NormalizeContainer: %q", got)
	}
	for serial := 0; serial < 2000; serial += 7 {
		n, ok := numbers.ContainerNumber("MSK", serial)
		if !ok || !numbers.ValidContainer(n) {
			t.Fatalf("ContainerNumber(MSK, %d) = %q, %v", serial, n, ok)
		}
	}
	if _, ok := numbers.ContainerNumber("M1K", 1); ok {
		t.Error("owner code with a digit accepted")
	}
}

func TestIMO(t *testing.T) {
	// Emma Maersk (9321483) and Ever Given (9811000): public IMO numbers.
	for _, n := range []string{"9321483", "9811000"} {
		if !numbers.ValidIMO(n) {
			t.Errorf("%s: valid IMO refused", n)
		}
	}
	for _, n := range []string{"9321484", "932148", "93214830", "93214a3", ""} {
		if numbers.ValidIMO(n) {
			t.Errorf("%q: invalid IMO accepted", n)
		}
	}
	if got := numbers.NormalizeIMO("imo 9321483"); got != "9321483" {
		t.Errorf("NormalizeIMO: %q", got)
	}
	for body := 900000; body < 1000000; body += 997 {
		if n := numbers.IMONumber(body); !numbers.ValidIMO(n) {
			t.Fatalf("IMONumber(%d) = %q not valid", body, n)
		}
	}
}

func TestReference(t *testing.T) {
	if got := numbers.NormalizeReference(" maeu 123-456 "); got != "MAEU123456" {
		t.Errorf("NormalizeReference: %q", got)
	}
	for _, s := range []string{"MAEU123456789", "1234", "MEDUAB123456"} {
		if !numbers.ValidReference(s) {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range []string{"ABC", "ABCDEFG", "MAEU12345678901234567", "MAEU_123", "maeu123"} {
		if numbers.ValidReference(s) {
			t.Errorf("%q accepted", s)
		}
	}
}
