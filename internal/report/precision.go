package report

import (
	"github.com/ctxaudit/ctxaudit/schema"
)

// How exactly the figures are known, in the words both renderers use.

// qualifier is the word before a figure of the given precision: "at least"
// for a lower bound, "about" for a figure read from a rounded label.
func qualifier(p schema.Precision) string {
	switch p {
	case schema.PrecisionLowerBound:
		return "at least "
	case schema.PrecisionApproximate:
		return "about "
	}
	return ""
}

// originalSizes is sizes of the original, qualified by its precision:
// "at least ? bytes · 30,016 chars · ? lines · ? tokens".
func originalSizes(o schema.Original) string { return qualifier(o.Precision) + sizes(o.Sizes) }

// originalHeadline is headline of the original, qualified.
func originalHeadline(o schema.Original) string {
	h := headline(o.Sizes)
	if h == "unknown" {
		return h
	}
	return qualifier(o.Precision) + h
}

// source is "(marker)", "(marker; a lower bound)" after a call's original's
// sizes.
func source(c *schema.ToolCall) string {
	o := c.Original
	s := orDefault(string(o.Source), "unknown")
	switch {
	case o.Precision == schema.PrecisionLowerBound && c.Reason == "timeout":
		s += "; a lower bound: the command was still running when it was counted"
	case o.Precision == schema.PrecisionLowerBound:
		s += "; a lower bound: the output hit a cap before it was counted"
	case o.Precision == schema.PrecisionApproximate:
		s += "; approximate: read from a rounded size label"
	}
	return "(" + s + ")"
}

// totalOf is the total of a shown range, qualified when it is the
// original's figure and that is not exact.
func totalOf(c *schema.ToolCall) string {
	if !c.Total.Known {
		return count(c.Total)
	}
	if o := c.Original.Sizes.In(c.Shown.Unit); o.Known && o.N == c.Total.N {
		return qualifier(c.Original.Precision) + num(c.Total.N)
	}
	return num(c.Total.N)
}

// tailOf is " and 25,013–30,016" for the second range of a head+tail cut.
func tailOf(c *schema.ToolCall) string {
	if !c.ShownTail.Start.Known && !c.ShownTail.End.Known {
		return ""
	}
	return " and " + count(c.ShownTail.Start) + "–" + count(c.ShownTail.End)
}

// tailNote says when the kept tail is not the end of the output.
func tailNote(c *schema.ToolCall) string {
	if (c.ShownTail.Start.Known || c.ShownTail.End.Known) && !c.ShownTailIsEnd {
		return " (the tail shown is the end of what the harness received, not of the output)"
	}
	return ""
}

// understatedNote follows a marker that claims less was cut than was.
// Empty when it does not.
func understatedNote(c *schema.ToolCall) string {
	switch {
	case !c.MarkerUnderstated:
		return ""
	case c.Original.Precision == schema.PrecisionLowerBound:
		return "(may understate what was cut: it counts only what was kept before the cap)"
	}
	return "(understates what was cut)"
}

// coverageNote is "at most 33% of the original seen in the session", with
// a warning when the pieces came from separate fetches.
func coverageNote(c *schema.ToolCall) string {
	if !c.SessionCoverage.Known {
		if c.CoverageMixedVersions {
			return "pieces from separate fetches of a source that may have changed"
		}
		return ""
	}
	s := percent(c.SessionCoverage.V) + " of the original seen in the session"
	if c.CoverageUpperBound {
		s = "at most " + s
	}
	if c.CoverageMixedVersions {
		s += ", pieced from separate fetches of a source that may have changed"
	}
	return s
}
