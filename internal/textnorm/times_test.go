package textnorm

import "testing"

// "*" and "×" between two numbers multiply: "times", as "=" is "equals" and "+" "plus" (espeak-ng read "5*3" as
// "five asterisk three"). "x", and "×" with a unit after the second number, stay dimensions ("by"); "*" elsewhere
// stays as it is.
func TestNormalizeReadsTimes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"5*3 = 15", "five times three equals fifteen"},
		{"x = 5 * 3", "x equals five times three"},
		{"5 × 3", "five times three"},
		{"5 × 3 = 15", "five times three equals fifteen"},
		{"-5 * -3", "minus five times minus three"},
		{"2*3*4", "two times three times four"},
		{"5.5 * 2", "five point five times two"},
		// dimensions and other uses
		{"6 x 4", "six by four"},
		{"2 × 3 m", "two by three meters"},
		{"2 × 3m", "two by three meters"},
		{"1920×1080", "one thousand nine hundred twenty by one thousand eighty"},
		{"a*b", "a*b"},
		{"a * b", "a * b"},
		{"Press * now", "Press * now"},
		{"5 * x", "five * x"},
	} {
		if got := Normalize(c.in); got != c.want {
			t.Errorf("Normalize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
