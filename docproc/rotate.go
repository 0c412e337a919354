package docproc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
)

// Rotatable are the content types Rotate can turn: those Go's standard
// library decodes and encodes again. WebP, TIFF and HEIC images are not
// (no encoder without C libraries); other files are not images.
var Rotatable = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true}

// ValidDegrees are the rotations Rotate turns by, clockwise.
func ValidDegrees(d int) bool { return d == 90 || d == 180 || d == 270 }

// Rotate turns an image clockwise by degrees (90, 180, 270) and encodes it
// again in its format. A PNG keeps its text chunks and a JPEG its
// comments and APP1 (EXIF, XMP) segments, so the embedded text survives;
// a JPEG is encoded again at quality 92 (a lossless turn of JPEG blocks is
// beyond the standard library).
func Rotate(contentType string, data []byte, degrees int) ([]byte, error) {
	if !ValidDegrees(degrees) {
		return nil, fmt.Errorf("degrees must be one of: 90, 180, 270")
	}
	if !Rotatable[contentType] {
		return nil, fmt.Errorf("%s images cannot be rotated", contentType)
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("the image cannot be decoded: %w", err)
	}
	dst := turn(src, degrees)
	var b bytes.Buffer
	switch contentType {
	case "image/png":
		if err := png.Encode(&b, dst); err != nil {
			return nil, err
		}
		return keepPNGText(data, b.Bytes())
	case "image/jpeg":
		if err := jpeg.Encode(&b, dst, &jpeg.Options{Quality: 92}); err != nil {
			return nil, err
		}
		return keepJPEGMeta(data, b.Bytes())
	default:
		if err := gif.Encode(&b, dst, nil); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
}

// turn rotates src clockwise into a new RGBA image.
func turn(src image.Image, degrees int) image.Image {
	sb := src.Bounds()
	w, h := sb.Dx(), sb.Dy()
	in := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(in, in.Bounds(), src, sb.Min, draw.Src)
	var out *image.RGBA
	if degrees == 180 {
		out = image.NewRGBA(image.Rect(0, 0, w, h))
	} else {
		out = image.NewRGBA(image.Rect(0, 0, h, w))
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := in.RGBAAt(x, y)
			switch degrees {
			case 90:
				out.SetRGBA(h-1-y, x, c)
			case 180:
				out.SetRGBA(w-1-x, h-1-y, c)
			case 270:
				out.SetRGBA(y, w-1-x, c)
			}
		}
	}
	return out
}

// keepPNGText copies the text chunks of orig into enc, before its IEND.
func keepPNGText(orig, enc []byte) ([]byte, error) {
	chunks, err := pngChunks(orig)
	if err != nil {
		return nil, err
	}
	var text bytes.Buffer
	for _, c := range chunks {
		if c.typ == "tEXt" || c.typ == "zTXt" || c.typ == "iTXt" {
			var n [4]byte
			binary.BigEndian.PutUint32(n[:], uint32(len(c.data)))
			text.Write(n[:])
			body := append([]byte(c.typ), c.data...)
			text.Write(body)
			binary.BigEndian.PutUint32(n[:], crc32.ChecksumIEEE(body))
			text.Write(n[:])
		}
	}
	if text.Len() == 0 {
		return enc, nil
	}
	const iend = 12 // the last chunk: length, "IEND", CRC
	out := append(append(append([]byte{}, enc[:len(enc)-iend]...), text.Bytes()...), enc[len(enc)-iend:]...)
	return out, nil
}

// keepJPEGMeta copies the comment and APP1 segments of orig into enc,
// after its start of image.
func keepJPEGMeta(orig, enc []byte) ([]byte, error) {
	segs, err := jpegSegments(orig)
	if err != nil {
		return nil, err
	}
	var meta bytes.Buffer
	for _, s := range segs {
		if s.marker == 0xFE || s.marker == 0xE1 {
			meta.Write([]byte{0xFF, s.marker})
			var n [2]byte
			binary.BigEndian.PutUint16(n[:], uint16(len(s.data)+2))
			meta.Write(n[:])
			meta.Write(s.data)
		}
	}
	return append(append(append([]byte{}, enc[:2]...), meta.Bytes()...), enc[2:]...), nil
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
