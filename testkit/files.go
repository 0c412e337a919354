package testkit

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
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

// TextPNG is a w×h PNG, its top-left pixel red, carrying text the way a
// scanner or a phone writes it: chunks are (type, data) pairs (tEXt, iTXt
// …), written before the image's end.
func TextPNG(tb testing.TB, w, h int, chunks ...string) []byte {
	tb.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		tb.Fatal(err)
	}
	enc := b.Bytes()
	end := enc[len(enc)-12:] // the IEND chunk
	out := append([]byte{}, enc[:len(enc)-12]...)
	for i := 0; i+1 < len(chunks); i += 2 {
		body := append([]byte(chunks[i]), chunks[i+1]...)
		out = binary.BigEndian.AppendUint32(out, uint32(len(chunks[i+1])))
		out = append(out, body...)
		out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(body))
	}
	return append(out, end...)
}
