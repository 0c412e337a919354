package resolve

// ISO 6346 container numbers: an owner code of three letters, an
// equipment category (U, J or Z), six digits and a check digit. A small
// helper of our own (the carrier branch has one too; we keep one when they
// merge).

// iso6346Letters are the values of the letters: 10 upwards, skipping the
// multiples of 11.
var iso6346Letters = func() [26]int {
	var v [26]int
	n := 10
	for i := range v {
		if n%11 == 0 {
			n++
		}
		v[i] = n
		n++
	}
	return v
}()

// isContainerNumber reports whether s (normalised) has the shape of an ISO
// 6346 container number, whatever its check digit.
func isContainerNumber(s string) bool {
	if len(s) != 11 {
		return false
	}
	for i := 0; i < 11; i++ {
		c := s[i]
		switch {
		case i < 3:
			if c < 'A' || c > 'Z' {
				return false
			}
		case i == 3:
			if c != 'U' && c != 'J' && c != 'Z' {
				return false
			}
		default:
			if c < '0' || c > '9' {
				return false
			}
		}
	}
	return true
}

// containerCheckDigit is the check digit of the first ten characters of a
// container number of isContainerNumber's shape.
func containerCheckDigit(s string) int {
	sum, w := 0, 1
	for i := 0; i < 10; i++ {
		c := s[i]
		v := int(c - '0')
		if c >= 'A' && c <= 'Z' {
			v = iso6346Letters[c-'A']
		}
		sum += v * w
		w *= 2
	}
	return sum % 11 % 10
}

// validContainerNumber reports whether s is a container number whose check
// digit is right.
func validContainerNumber(s string) bool {
	return isContainerNumber(s) && int(s[10]-'0') == containerCheckDigit(s)
}
