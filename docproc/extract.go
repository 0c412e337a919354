package docproc

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// MaxText is the most text kept of one document (bytes of UTF-8); the rest
// is cut at a rune boundary.
const MaxText = 1 << 20

// NoTextError is an extraction that cannot succeed by retrying: the file
// has no text Shipgraph can read without a model it does not have (OCR),
// or is of a format it does not read. Reason is the public, stable code
// (documents.extraction_error); the message says why.
type NoTextError struct {
	Reason string
	Msg    string
}

func (e *NoTextError) Error() string { return e.Reason + ": " + e.Msg }

// The reasons of NoTextError.
const (
	ReasonNeedsOCR    = "needs_ocr"
	ReasonUnsupported = "unsupported_format"
	ReasonUnreadable  = "unreadable_file"
)

func needsOCR(what string) error {
	return &NoTextError{ReasonNeedsOCR, what + " has no embedded text; reading printed or scanned text needs an OCR model, which Shipgraph does not have"}
}

// Extracted is the text of one file and what read it.
type Extracted struct {
	Text      string
	Extractor string // "pdf", "png-text", "jpeg-metadata", "plain"
}

// Extract returns the text of a file of contentType: a PDF's text layer
// (github.com/ledongthuc/pdf), a PNG's tEXt/zTXt/iTXt chunks, a JPEG's
// comments, XMP description and EXIF ImageDescription/XPComment, or the
// bytes of plain text and CSV. Anything else, and a file without text, is
// a *NoTextError.
func Extract(contentType string, data []byte) (Extracted, error) {
	var (
		text string
		kind string
		err  error
	)
	switch contentType {
	case "application/pdf":
		kind = "pdf"
		text, err = pdfText(data)
		if err == nil && strings.TrimSpace(text) == "" {
			err = needsOCR("the PDF")
		}
	case "image/png":
		kind = "png-text"
		text, err = pngText(data)
		if err == nil && strings.TrimSpace(text) == "" {
			err = needsOCR("the image")
		}
	case "image/jpeg":
		kind = "jpeg-metadata"
		text, err = jpegText(data)
		if err == nil && strings.TrimSpace(text) == "" {
			err = needsOCR("the image")
		}
	case "text/plain", "text/csv":
		kind, text = "plain", string(data)
	case "image/gif", "image/webp", "image/tiff", "image/heic":
		err = needsOCR("a " + strings.TrimPrefix(contentType, "image/") + " image (Shipgraph reads embedded text of PNG and JPEG only)")
	default:
		err = &NoTextError{ReasonUnsupported, fmt.Sprintf("Shipgraph reads text from PDF, PNG, JPEG, plain text and CSV files, not from %s", contentType)}
	}
	if err != nil {
		return Extracted{}, err
	}
	return Extracted{Text: clean(text), Extractor: kind}, nil
}

// clean makes text storable: valid UTF-8 without NUL (PostgreSQL refuses
// both), line ends as \n, at most MaxText bytes.
func clean(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if len(s) > MaxText {
		cut := MaxText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return strings.TrimSpace(s)
}

// pdfText reads the text of every page, a line per text row. The library
// panics on some malformed files: that is an unreadable file, not a crash.
func pdfText(data []byte) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", &NoTextError{ReasonUnreadable, fmt.Sprintf("the PDF cannot be read: %v", r)}
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return "", &NoTextError{ReasonUnreadable, "the PDF cannot be read: " + err.Error()}
	}
	var b strings.Builder
	for i := 1; i <= r.NumPage(); i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		rows, err := p.GetTextByRow()
		if err != nil {
			return "", &NoTextError{ReasonUnreadable, fmt.Sprintf("page %d of the PDF cannot be read: %v", i, err)}
		}
		for _, row := range rows {
			for j, w := range row.Content {
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(w.S)
			}
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
		if b.Len() > MaxText {
			break
		}
	}
	return b.String(), nil
}

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// pngChunk is one chunk of a PNG file.
type pngChunk struct {
	typ  string
	data []byte
}

func pngChunks(data []byte) ([]pngChunk, error) {
	if !bytes.HasPrefix(data, pngMagic) {
		return nil, &NoTextError{ReasonUnreadable, "the file is not a PNG image"}
	}
	var out []pngChunk
	p := data[len(pngMagic):]
	for len(p) >= 12 {
		n := binary.BigEndian.Uint32(p)
		if uint64(n)+12 > uint64(len(p)) {
			return nil, &NoTextError{ReasonUnreadable, "the PNG image is truncated"}
		}
		out = append(out, pngChunk{typ: string(p[4:8]), data: p[8 : 8+n]})
		p = p[12+n:]
	}
	return out, nil
}

// pngText returns "keyword: text" lines of the text chunks.
func pngText(data []byte) (string, error) {
	chunks, err := pngChunks(data)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, c := range chunks {
		key, text, ok := pngTextChunk(c)
		if ok && strings.TrimSpace(text) != "" {
			lines = append(lines, key+": "+text)
		}
	}
	return strings.Join(lines, "\n"), nil
}

func pngTextChunk(c pngChunk) (key, text string, ok bool) {
	k, rest, found := bytes.Cut(c.data, []byte{0})
	if !found {
		return "", "", false
	}
	switch c.typ {
	case "tEXt":
		return latin1(k), latin1(rest), true
	case "zTXt":
		if len(rest) < 1 {
			return "", "", false
		}
		t, err := inflate(rest[1:])
		return latin1(k), latin1(t), err == nil
	case "iTXt":
		if len(rest) < 2 {
			return "", "", false
		}
		compressed := rest[0] == 1
		_, rest, _ = bytes.Cut(rest[2:], []byte{0}) // language tag
		_, rest, _ = bytes.Cut(rest, []byte{0})     // translated keyword
		if compressed {
			t, err := inflate(rest)
			return latin1(k), string(t), err == nil
		}
		return latin1(k), string(rest), true
	}
	return "", "", false
}

func inflate(b []byte) ([]byte, error) {
	r, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, MaxText))
}

func latin1(b []byte) string {
	rs := make([]rune, len(b))
	for i, c := range b {
		rs[i] = rune(c)
	}
	return string(rs)
}

// jpegSegment is one marker segment before the image data.
type jpegSegment struct {
	marker byte
	data   []byte
}

func jpegSegments(data []byte) ([]jpegSegment, error) {
	if len(data) < 4 || data[0] != 0xFF || data[1] != 0xD8 {
		return nil, &NoTextError{ReasonUnreadable, "the file is not a JPEG image"}
	}
	var out []jpegSegment
	p := data[2:]
	for len(p) >= 4 && p[0] == 0xFF {
		m := p[1]
		if m == 0xD9 || m == 0xDA { // end of image, start of scan: no more metadata
			break
		}
		if m == 0x01 || (m >= 0xD0 && m <= 0xD7) {
			p = p[2:]
			continue
		}
		n := int(binary.BigEndian.Uint16(p[2:]))
		if n < 2 || n+2 > len(p) {
			return nil, &NoTextError{ReasonUnreadable, "the JPEG image is truncated"}
		}
		out = append(out, jpegSegment{marker: m, data: p[4 : 2+n]})
		p = p[2+n:]
	}
	return out, nil
}

var (
	xmpHeader  = []byte("http://ns.adobe.com/xap/1.0/\x00")
	exifHeader = []byte("Exif\x00\x00")
	xmpTexts   = regexp.MustCompile(`(?s)<(dc:description|dc:title|dc:subject|exif:UserComment)[^>]*>(.*?)</(?:dc:description|dc:title|dc:subject|exif:UserComment)>`)
	xmlTag     = regexp.MustCompile(`<[^>]*>`)
)

// jpegText returns the comments, the XMP description, title and subject,
// and EXIF's ImageDescription and XPComment.
func jpegText(data []byte) (string, error) {
	segs, err := jpegSegments(data)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, s := range segs {
		switch {
		case s.marker == 0xFE:
			lines = append(lines, string(s.data))
		case s.marker == 0xE1 && bytes.HasPrefix(s.data, xmpHeader):
			for _, m := range xmpTexts.FindAllSubmatch(s.data[len(xmpHeader):], -1) {
				t := strings.Join(strings.Fields(xmlUnescape(xmlTag.ReplaceAllString(string(m[2]), " "))), " ")
				if t != "" {
					lines = append(lines, t)
				}
			}
		case s.marker == 0xE1 && bytes.HasPrefix(s.data, exifHeader):
			lines = append(lines, exifTexts(s.data[len(exifHeader):])...)
		}
	}
	return strings.Join(lines, "\n"), nil
}

var xmlEntities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'", "&amp;", "&")

func xmlUnescape(s string) string { return xmlEntities.Replace(s) }

// exifTexts reads IFD0's ImageDescription (0x010E, ASCII) and XPComment
// (0x9C9C, UTF-16LE) from a TIFF structure.
func exifTexts(t []byte) []string {
	if len(t) < 8 {
		return nil
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return nil
	}
	off := int(bo.Uint32(t[4:]))
	if off+2 > len(t) || off < 8 {
		return nil
	}
	n := int(bo.Uint16(t[off:]))
	var out []string
	for i := 0; i < n; i++ {
		e := off + 2 + 12*i
		if e+12 > len(t) {
			break
		}
		tag, count := bo.Uint16(t[e:]), int(bo.Uint32(t[e+4:]))
		if tag != 0x010E && tag != 0x9C9C {
			continue
		}
		var v []byte
		if count <= 4 {
			v = t[e+8 : e+8+count]
		} else if p := int(bo.Uint32(t[e+8:])); p >= 0 && p+count <= len(t) && count > 0 {
			v = t[p : p+count]
		}
		switch tag {
		case 0x010E:
			out = append(out, strings.TrimRight(string(v), "\x00 "))
		case 0x9C9C:
			u := make([]uint16, len(v)/2)
			for j := range u {
				u[j] = binary.LittleEndian.Uint16(v[2*j:])
			}
			out = append(out, strings.TrimRight(string(utf16.Decode(u)), "\x00 "))
		}
	}
	return out
}

// IsNoText reports whether err is a *NoTextError, and returns it.
func IsNoText(err error) (*NoTextError, bool) {
	var e *NoTextError
	ok := errors.As(err, &e)
	return e, ok
}
