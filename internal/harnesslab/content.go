package harnesslab

import (
	"bytes"
	"encoding/json"
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

// PDF is a document of pages pages, each with one line of text naming its
// page, written out with a correct cross-reference table: a file a tool can
// read whose bytes are the same on every run.
func PDF(pages int) string {
	var b strings.Builder
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	b.WriteString("%PDF-1.4\n")
	// 1 catalog, 2 pages, 3 font, then a page and its content per page.
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	kids := make([]string, pages)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", 4+2*i)
	}
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for i := 0; i < pages; i++ {
		obj(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*i))
		text := fmt.Sprintf("BT /F1 24 Tf 72 700 Td (Page %d of %d) Tj ET", i+1, pages)
		obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(text), text))
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.String()
}

// notebookWithOutput is a Jupyter notebook of one code cell whose stream
// output is out.
func notebookWithOutput(out string) string {
	b, err := json.Marshal(map[string]any{
		"cells": []any{map[string]any{
			"cell_type": "code", "execution_count": 1, "metadata": map[string]any{},
			"source":  []string{"print(report())"},
			"outputs": []any{map[string]any{"name": "stdout", "output_type": "stream", "text": []string{out}}},
		}},
		"metadata": map[string]any{}, "nbformat": 4, "nbformat_minor": 5,
	})
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return string(b)
}
