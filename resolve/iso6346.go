package resolve

import "shipgraph/carrier/numbers"

// checkDigit is the ISO 6346 check digit a container number of
// numbers.ContainerShape should end with (carrier/numbers holds the rules,
// shared with the carrier simulator).
func checkDigit(number string) int {
	d, _ := numbers.ContainerCheckDigit(number[:10])
	return d
}
