package forensics

import (
	"strings"

	"github.com/ctxaudit/ctxaudit/schema"
)

// Image reads. An image reaches the model as an image block, which no text
// size measures (Input.NonText), so the context stays unknown; what these
// rules can tell is whether the harness sent the image whole, resized it, or
// left it out.

// ccReadImage: a Read whose content is an image, with the toolUseResult
// Claude Code writes for one ({type:"image", file:{base64, type,
// originalSize, dimensions}}, read with the rest of it in claudeResult).
// Displayed smaller, it was resized (Claude Code scales an image down to its
// limit) without a word in the context: a silent cut, strategy resized.
// Displayed at its original dimensions and sent as the file's own bytes (the
// base64 encodes as many bytes as the file has), it was sent whole:
// complete. At its dimensions but other bytes, it was re-encoded, perhaps
// lossily, which nothing in the context shows: unknown. The file's size is
// the original's bytes in every case.
func ccReadImage(s *scan, fd *finding) bool {
	if s.in.Tool != "Read" || s.in.NonText != NonTextMedia {
		return false
	}
	r := s.claudeResult()
	f := &r.File
	if r.Type != "image" || !f.OriginalWidth.Known || !f.OriginalHeight.Known || !f.DisplayWidth.Known || !f.DisplayHeight.Known {
		return false // no dimensions: nothing says whether it was resized
	}
	if f.OriginalSize.Known {
		s.orig.add(rankMetadata, schema.Sizes{Bytes: f.OriginalSize})
	}
	if f.DisplayWidth.N < f.OriginalWidth.N || f.DisplayHeight.N < f.OriginalHeight.N {
		fd.silentCut(schema.StrategyResized, "too_large")
		fd.Detector = "claude_code.read_image_resized"
		return true
	}
	if f.EncodedSize != f.OriginalSize || !f.OriginalSize.Known {
		fd.Kind = schema.KindUnknown
		fd.Detector = "claude_code.read_image_reencoded"
		return true
	}
	fd.sentWhole()
	return true
}

// ccReadPDF: a Read of a PDF, which Claude Code sends as a document block
// after a line "PDF file read: <path> (<size label>)", with the toolUseResult
// {type:"pdf", file:{filePath, base64, originalSize}} (the harness lab's
// read-pdf). When the base64 it sent encodes as many bytes as the file has,
// the whole file went to the model: complete, and the file's size is the
// original's bytes. Anything else says nothing (the generic rule: unknown).
func ccReadPDF(s *scan, fd *finding) bool {
	if s.in.Tool != "Read" || s.in.NonText != NonTextMedia {
		return false
	}
	r := s.claudeResult()
	f := &r.File
	if r.Type != "pdf" || !f.OriginalSize.Known || f.EncodedSize != f.OriginalSize {
		return false
	}
	s.orig.add(rankMetadata, schema.Sizes{Bytes: f.OriginalSize})
	fd.sentWhole()
	return true
}

// sentWhole records a file Claude Code sent as its own bytes, which its
// toolUseResult shows: complete, confirmed by the harness's metadata.
func (fd *finding) sentWhole() {
	fd.Kind = schema.KindNone
	fd.complete = true
	fd.confirmedBy = schema.SourceHarnessMetadata
}

// pi's read of an image (core/tools/read.js): a caption "Read image file
// [<mime>]", then a note for each thing done to the image, then the image
// block unless it was left out.
const (
	piImageCaption = "Read image file ["
	// The model takes no images: pi still writes the image block, but its
	// provider layer replaces it with a placeholder before the request.
	piImageNonVision = "[Current model does not support images. The image will be omitted from this request.]"
	// The image could not be made small enough to send.
	piImageTooLarge = "[Image omitted: could not be resized below the inline image size limit.]"
	// The image was resized before it was sent.
	piImageResized = "[Image: original "
)

// piReadImage judges pi's read of an image by its notes: left out (the
// model was told, and nothing of the image reached it), resized (told what
// it was and what it was shown at, not why), or — with no note, as pi notes
// every resize and omission — sent whole.
func piReadImage(s *scan, fd *finding) bool {
	if s.in.Tool != "read" || !strings.HasPrefix(s.text, piImageCaption) {
		return false
	}
	switch {
	case strings.Contains(s.text, piImageNonVision):
		fd.cut(schema.StrategyRefused, "unsupported_media", piImageNonVision)
		fd.disclose(true, true, false)
	case strings.Contains(s.text, piImageTooLarge):
		fd.cut(schema.StrategyRefused, "too_large", piImageTooLarge)
		fd.disclose(true, true, false)
	case s.in.NonText != NonTextMedia:
		return false // a caption without the image: not pi's image read
	case strings.Contains(s.text, piImageResized):
		fd.cut(schema.StrategyResized, "too_large", piResizeNote(s.text))
		fd.disclose(true, false, false)
		fd.Detector = "pi.read_image_resized"
	default:
		fd.Kind = schema.KindNone
		fd.complete = true
		fd.confirmedBy = schema.SourceMarker
	}
	return true
}

// piResizeNote is pi's resize note as the model saw it, "[Image: original
// WxH, displayed at wxh. …]", or its opening when the closing bracket is
// missing.
func piResizeNote(text string) string {
	i := strings.Index(text, piImageResized)
	note := text[i:]
	if j := strings.IndexByte(note, ']'); j >= 0 {
		return note[:j+1]
	}
	return piImageResized
}
