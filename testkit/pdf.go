package testkit

import (
	"bytes"
	"testing"

	"github.com/go-pdf/fpdf"
)

// FormPDF prints lines on one A4 page with fpdf, as a form would: the
// first line as a bold title, the others below it.
func FormPDF(tb testing.TB, lines []string) []byte {
	tb.Helper()
	p := fpdf.New("P", "mm", "A4", "")
	p.SetCompression(true)
	p.AddPage()
	p.SetFont("Helvetica", "B", 16)
	p.Cell(0, 10, lines[0])
	p.Ln(12)
	p.SetFont("Helvetica", "", 10)
	for _, l := range lines[1:] {
		p.Cell(0, 6, l)
		p.Ln(7)
	}
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}
