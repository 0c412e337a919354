package docproc_test

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/jpeg"
	"image/png"
	"slices"
	"strings"
	"testing"

	"shipgraph/db/seed"

	"shipgraph/docproc"
	"shipgraph/model"
	"shipgraph/testkit"
)

var refs = seed.DocumentRefs{BillOfLading: "MAEU240117352", Booking: "BKG7731209", Containers: []string{"MSCU1234566", "TGHU 765432-0"}}

func TestClassifyGeneratedPDFs(t *testing.T) {
	for _, dt := range model.DocumentTypes {
		t.Run(dt.Code, func(t *testing.T) {
			x, err := docproc.Extract("application/pdf", testkit.FormPDF(t, seed.DocumentLines(dt.Code, refs)))
			if err != nil {
				t.Fatal(err)
			}
			if x.Extractor != "pdf" {
				t.Errorf("extractor %q", x.Extractor)
			}
			c := docproc.Classify(x.Text)
			if c.Type != dt.Code {
				t.Errorf("classified %s as %s (%s)\n%s", dt.Code, c.Type, c.Notes, x.Text)
			}
			r := docproc.FindReferences(x.Text)
			if !slices.Contains(r.BillsOfLading, "MAEU240117352") {
				t.Errorf("bills of lading %v", r.BillsOfLading)
			}
			if dt.Code == "bill_of_lading" && !slices.Equal(r.Bookings, []string{"BKG7731209"}) {
				t.Errorf("bookings %v", r.Bookings)
			}
			f := docproc.ExtractFields(c.Type, x.Text, r)
			t.Logf("%s fields %v", dt.Code, f)
			switch dt.Code {
			case "bill_of_lading":
				want := map[string]any{"shipper": "Acme Export Ltd, Shenzhen", "consignee": "Globex Imports Inc, Los Angeles",
					"vessel": "MAERSK ESSEN", "voyage": "412E", "issue_date": "2026-02-10", "port_of_loading": "Yantian, China",
					"bill_of_lading_number": "MAEU240117352", "booking_number": "BKG7731209"}
				for k, v := range want {
					if f[k] != v {
						t.Errorf("%s = %v, want %v", k, f[k], v)
					}
				}
				if !slices.Equal(f["container_numbers"].([]string), []string{"MSCU1234566", "TGHU7654320"}) {
					t.Errorf("containers %v", f["container_numbers"])
				}
			case "commercial_invoice":
				if f["invoice_number"] != "INV-2026-0142" || f["invoice_date"] != "2026-02-08" || f["total_amount"] != "USD 3000.00" {
					t.Errorf("invoice fields %v", f)
				}
			case "arrival_notice":
				if f["eta"] != "2026-03-05" || f["last_free_day"] != "2026-03-09" {
					t.Errorf("arrival fields %v", f)
				}
			case "customs_entry":
				if f["entry_number"] != "123-4567890-1" || f["entry_date"] != "2026-03-05" {
					t.Errorf("entry fields %v", f)
				}
			}
		})
	}
}

func TestReferencesCheckDigits(t *testing.T) {
	r := docproc.FindReferences("Containers: MSCU1234566 MSCU1234565 tghu 765432-0\nB/L No.: maeu-240117352\nBooking Number: 7731209")
	if !slices.Equal(r.Containers, []string{"MSCU1234566", "TGHU7654320"}) {
		t.Errorf("containers %v (MSCU1234565 has a wrong check digit)", r.Containers)
	}
	if !slices.Equal(r.BillsOfLading, []string{"MAEU240117352"}) || !slices.Equal(r.Bookings, []string{"7731209"}) {
		t.Errorf("references %+v", r)
	}
}

// pngWithText is a 3x2 PNG with a tEXt and an iTXt chunk.
func pngWithText(t testing.TB, text string) []byte {
	return testkit.TextPNG(t, 3, 2, "tEXt", "Title\x00Scan", "iTXt", "Description\x00\x00\x00en\x00\x00"+text)
}

func TestImageText(t *testing.T) {
	p := pngWithText(t, "DELIVERY ORDER\nB/L No: MAEU240117352 — Lieferschein für Müller")
	x, err := docproc.Extract("image/png", p)
	if err != nil || !strings.Contains(x.Text, "Lieferschein für Müller") || !strings.Contains(x.Text, "Title: Scan") {
		t.Fatalf("png: %q %v", x.Text, err)
	}
	// A JPEG with a comment and an EXIF ImageDescription.
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, 8, 8)), nil); err != nil {
		t.Fatal(err)
	}
	desc := "PACKING LIST MSCU1234566\x00"
	tiff := []byte("II*\x00\x08\x00\x00\x00\x01\x00\x0e\x01\x02\x00")
	tiff = binary.LittleEndian.AppendUint32(tiff, uint32(len(desc)))
	tiff = binary.LittleEndian.AppendUint32(tiff, 26)
	tiff = append(tiff, 0, 0, 0, 0)
	tiff = append(tiff, desc...)
	app1 := append([]byte("Exif\x00\x00"), tiff...)
	com := []byte("scanned at the terminal gate")
	seg := func(m byte, d []byte) []byte {
		return append([]byte{0xFF, m, byte((len(d) + 2) >> 8), byte(len(d) + 2)}, d...)
	}
	j := append(append(append([]byte{0xFF, 0xD8}, seg(0xE1, app1)...), seg(0xFE, com)...), b.Bytes()[2:]...)
	x, err = docproc.Extract("image/jpeg", j)
	if err != nil || !strings.Contains(x.Text, "PACKING LIST MSCU1234566") || !strings.Contains(x.Text, "scanned at the terminal gate") {
		t.Fatalf("jpeg: %q %v", x.Text, err)
	}
	// No embedded text: a clear refusal, not an empty success.
	_, err = docproc.Extract("image/jpeg", b.Bytes())
	if e, ok := docproc.IsNoText(err); !ok || e.Reason != docproc.ReasonNeedsOCR {
		t.Fatalf("jpeg without text: %v", err)
	}
	_, err = docproc.Extract("application/msword", []byte("x"))
	if e, ok := docproc.IsNoText(err); !ok || e.Reason != docproc.ReasonUnsupported {
		t.Fatalf("word: %v", err)
	}
	_, err = docproc.Extract("application/pdf", []byte("%PDF-1.4\n% nothing\n%%EOF\n"))
	if _, ok := docproc.IsNoText(err); !ok {
		t.Fatalf("broken pdf: %v", err)
	}
}

func TestRotate(t *testing.T) {
	p := pngWithText(t, "ARRIVAL NOTICE")
	for _, d := range []int{90, 180, 270} {
		out, err := docproc.Rotate("image/png", p, d)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		w, h := img.Bounds().Dx(), img.Bounds().Dy()
		// The red pixel at (0,0) of a 3x2 image goes to the top right
		// (90), the bottom right (180), the bottom left (270).
		want := map[int][3]int{90: {2, 3, 0}, 180: {3, 2, 0}, 270: {2, 3, 0}}[d]
		if w != want[0] || h != want[1] {
			t.Errorf("%d: size %dx%d", d, w, h)
		}
		pos := map[int]image.Point{90: {1, 0}, 180: {2, 1}, 270: {0, 2}}[d]
		if r, _, _, _ := img.At(pos.X, pos.Y).RGBA(); r>>8 != 255 {
			t.Errorf("%d: the red pixel is not at %v", d, pos)
		}
		x, err := docproc.Extract("image/png", out)
		if err != nil || !strings.Contains(x.Text, "ARRIVAL NOTICE") {
			t.Errorf("%d: the text did not survive: %q %v", d, x.Text, err)
		}
	}
	if _, err := docproc.Rotate("image/png", p, 45); err == nil {
		t.Error("45 degrees rotated")
	}
}

func TestSchemas(t *testing.T) {
	for _, dt := range model.DocumentTypes {
		s, ok := docproc.DocumentSchema(dt.Code + "@" + docproc.SchemaVersion)
		if !ok || s.DocumentType != dt.Code || !strings.Contains(string(s.Payload), `"bill_of_lading_number"`) {
			t.Errorf("%s: %v %+v", dt.Code, ok, s)
		}
	}
	if _, ok := docproc.DocumentSchema("unknown@2026-03-23"); ok {
		t.Error("unknown schema found")
	}
}
