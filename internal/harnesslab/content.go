package harnesslab

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Lines is n generated lines "<tag> 000001 xxxx…", each width chars plus a
// newline: content whose every size the lab knows.
func Lines(tag string, n, width int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		head := fmt.Sprintf("%s %06d ", tag, i)
		b.WriteString(head)
		if pad := width - len(head); pad > 0 {
			b.WriteString(strings.Repeat("x", pad))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// sizes are the true sizes of a text.
type sizes struct{ bytes, chars, lines uint64 }

func measure(s string) sizes {
	n := strings.Count(s, "\n")
	if len(s) > 0 && !strings.HasSuffix(s, "\n") {
		n++
	}
	return sizes{uint64(len(s)), uint64(utf8.RuneCountInString(s)), uint64(n)}
}

func writeFiles(files map[string]string) func(work string) error {
	return func(work string) error {
		for name, body := range files {
			p := filepath.Join(work, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
}

func exact(n uint64) Size   { return Size{True: n, Precision: Exact} }
func atLeast(n uint64) Size { return Size{True: n, Precision: LowerBound} }
func untold(n uint64) Size  { return Size{True: n} }
func about(n uint64, tol float64) Size {
	return Size{True: n, Precision: Approximate, Tolerance: tol}
}
func ptr[T any](v T) *T { return &v }

func fmtName(i int) string { return fmt.Sprintf("file%05d.txt", i) }

// PNG is a w×h image of a fixed gradient, encoded as PNG: a picture a tool
// can read whose bytes are the same on every run.
func PNG(w, h int) string {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{R: uint8(x * 255 / max(w-1, 1)), G: uint8(y * 255 / max(h-1, 1)), B: 128, A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // encoding an in-memory RGBA image does not fail
	}
	return b.String()
}
