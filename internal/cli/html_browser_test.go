package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/ctxaudit/ctxaudit/collector/transcript/transcripttest"
	"github.com/ctxaudit/ctxaudit/internal/report"
)

// docsScreenshot is the PNG of one example's report kept in the docs;
// CTXAUDIT_UPDATE_SCREENSHOT=1 rewrites it from this test's rendering.
const docsScreenshot = "../../docs/postmortem-html.png"

// chromium finds a headless Chromium. Locally the browser tests skip
// without one; under CI=true its absence fails them (scripts/install-chromium.sh
// installs Debian's chromium).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH (CI=true): run scripts/install-chromium.sh")
	}
	t.Skip("no chromium on PATH: apt-get install chromium to run the browser tests")
	return ""
}

// runChromium runs a headless Chromium with no network and a throwaway
// profile on a local file, with extra flags, and returns its stdout.
func runChromium(t *testing.T, bin, page string, flags ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--user-data-dir=" + t.TempDir(), "--hide-scrollbars"}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+page)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", flags, err, errOut.String())
	}
	return out.Bytes()
}

// The HTML report of every bundled example renders in a real browser: the
// DOM Chromium builds has a card per call with its bar and marks, every
// answer with its risk, the --expect hits pinned on the right bars and
// every in-page link resolving; and the page paints to a PNG.
func TestHTMLReportInChromium(t *testing.T) {
	bin := chromium(t)
	examples := transcripttest.ExamplesDir(t)
	code, out, errOut := run(t, "sessions", examples, "--format", "json")
	if code != ExitOK {
		t.Fatalf("sessions: exit %d: %s", code, errOut)
	}
	var sessions []struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(out), &sessions); err != nil || len(sessions) != 7 {
		t.Fatalf("want the 7 example sessions: %v\n%s", err, out)
	}
	for _, s := range sessions {
		t.Run(s.SessionID[:8], func(t *testing.T) {
			t.Parallel()
			args := []string{"postmortem", examples, "--session", s.SessionID, "--expect", expectedTextOf(s.SessionID)}
			code, js, errOut := run(t, append(args, "--format", "json")...)
			if code != ExitOK {
				t.Fatalf("json: exit %d: %s", code, errOut)
			}
			var pm report.Postmortem
			if err := json.Unmarshal([]byte(js), &pm); err != nil {
				t.Fatal(err)
			}
			code, page, errOut := run(t, append(args, "--format", "html")...)
			if code != ExitOK {
				t.Fatalf("html: exit %d: %s", code, errOut)
			}
			checkSelfContained(t, page)
			file := filepath.Join(t.TempDir(), "postmortem.html")
			if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}

			dom, err := html.Parse(bytes.NewReader(runChromium(t, bin, file, "--dump-dom")))
			if err != nil {
				t.Fatal(err)
			}
			checkDOM(t, dom, &pm)

			shot := filepath.Join(t.TempDir(), "postmortem.png")
			runChromium(t, bin, file, "--window-size=1100,900", "--screenshot="+shot)
			checkPainted(t, shot)
			if strings.HasPrefix(s.SessionID, "55555555") && os.Getenv("CTXAUDIT_UPDATE_SCREENSHOT") == "1" {
				b, err := os.ReadFile(shot)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(docsScreenshot, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// checkSelfContained: nothing on the page loads from anywhere, and a
// Content-Security-Policy forbids it should a text slip through.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	if !strings.Contains(page, `content="default-src 'none'; style-src 'unsafe-inline'"`) {
		t.Error("page lacks the Content-Security-Policy that forbids every load")
	}
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	walk(doc, func(n *html.Node) {
		switch n.Data {
		case "script", "link", "img", "iframe", "object", "embed":
			t.Errorf("page has a <%s> element", n.Data)
		}
		for _, a := range n.Attr {
			if (a.Key == "src" || a.Key == "href") && !strings.HasPrefix(a.Val, "#") {
				t.Errorf("<%s %s=%q> points outside the page", n.Data, a.Key, a.Val)
			}
		}
	})
}

func checkDOM(t *testing.T, dom *html.Node, pm *report.Postmortem) {
	t.Helper()
	ids := map[string]bool{}
	var hrefs []string
	cards := map[string]*html.Node{}
	answers := map[string]*html.Node{}
	walk(dom, func(n *html.Node) {
		if id := attr(n, "id"); id != "" {
			ids[id] = true
		}
		if h := attr(n, "href"); h != "" {
			hrefs = append(hrefs, h)
		}
		if hasClass(n, "call") {
			cards[attr(n, "data-call-id")] = n
		}
		if hasClass(n, "answer") {
			answers[attr(n, "data-message-id")] = n
		}
	})
	if len(cards) != len(pm.ToolCalls) {
		t.Errorf("%d call cards, want %d", len(cards), len(pm.ToolCalls))
	}
	for _, c := range pm.ToolCalls {
		card := cards[c.CallID]
		if card == nil {
			t.Errorf("no card for call %s", c.CallID)
			continue
		}
		if got := attr(card, "data-strategy"); got != string(c.Strategy) {
			t.Errorf("%s: data-strategy %q, want %q", c.CallID, got, c.Strategy)
		}
		bars := find(card, func(n *html.Node) bool { return hasClass(n, "bar") })
		if len(bars) != 1 {
			t.Errorf("%s: %d bars, want 1", c.CallID, len(bars))
			continue
		}
		parts := find(bars[0], func(n *html.Node) bool { return hasClass(n, "part") })
		switch {
		case c.Strategy == "summary" || c.Strategy == "refused" || c.Strategy == "cleared":
			if len(parts) != 0 {
				t.Errorf("%s (%s): nothing of the original reached the context, yet %d parts are drawn", c.CallID, c.Strategy, len(parts))
			}
		case c.Strategy == "head_tail":
			if len(parts) != 2 {
				t.Errorf("%s: head_tail draws %d parts, want 2", c.CallID, len(parts))
			}
		case c.PartialByRequest:
			if len(parts) != 1 || !hasClass(card, "request") {
				t.Errorf("%s: a part by request should be drawn as one part coloured request", c.CallID)
			}
		case !c.Truncated && c.Kind == "none":
			if len(parts) != 1 || !strings.Contains(attr(parts[0], "style"), "width:100.00%") {
				t.Errorf("%s: a complete output should fill its bar", c.CallID)
			}
		}
		class := map[bool]string{true: "explicit", false: "silent"}[c.Kind == "explicit"]
		if c.Truncated && !hasClass(card, class) {
			t.Errorf("%s: a %s cut should be coloured %s, card class %q", c.CallID, c.Kind, class, attr(card, "class"))
		}
		marks := find(card, func(n *html.Node) bool { return hasClass(n, "mark") })
		if c.Truncated || c.Marker != "" {
			if len(marks) != 3 {
				t.Errorf("%s: %d disclosure marks, want 3", c.CallID, len(marks))
			}
			for _, m := range marks {
				want := map[string]bool{"where": c.Disclosure.Range, "why": c.Disclosure.Reason, "how to continue": c.Disclosure.Next}[attr(m, "data-mark")]
				if hasClass(m, "yes") != want {
					t.Errorf("%s: mark %q says %v, the record %v", c.CallID, attr(m, "data-mark"), hasClass(m, "yes"), want)
				}
			}
		}
		if c.ContinuationOf != "" && len(find(card, func(n *html.Node) bool { return hasClass(n, "continues") })) != 1 {
			t.Errorf("%s continues %s but has no link to it", c.CallID, c.ContinuationOf)
		}
	}
	for _, a := range pm.Answers {
		n := answers[a.MessageID]
		if n == nil {
			t.Errorf("no card for answer %s", a.MessageID)
			continue
		}
		if attr(n, "data-risk") != string(a.Risk) {
			t.Errorf("answer %s: data-risk %q, want %q", a.MessageID, attr(n, "data-risk"), a.Risk)
		}
		if got := len(find(n, func(x *html.Node) bool { return hasClass(x, "incomplete") })); got != len(a.IncompleteInputs) {
			t.Errorf("answer %s: %d incomplete-input links, want %d", a.MessageID, got, len(a.IncompleteInputs))
		}
		if !strings.Contains(text(n), a.Verdict) {
			t.Errorf("answer %s: the verdict is not on the page", a.MessageID)
		}
	}
	if e := pm.Expect; e != nil {
		for id, want := range map[string][]string{"cut": e.CutFrom, "context": e.FoundInContext} {
			for _, callID := range want {
				card := cards[callID]
				if card == nil || attr(card, "data-expect") != id {
					t.Errorf("call %s: want data-expect=%q", callID, id)
					continue
				}
				if len(find(card, func(n *html.Node) bool { return attr(n, "data-pin") == id })) != 1 {
					t.Errorf("call %s: no %s pin on its bar", callID, id)
				}
			}
		}
	}
	for _, h := range hrefs {
		if !ids[strings.TrimPrefix(h, "#")] {
			t.Errorf("link %s goes nowhere", h)
		}
	}
}

// checkPainted: the screenshot decodes, is the window's size, and is not
// blank.
func checkPainted(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1100 || b.Dy() != 900 {
		t.Errorf("screenshot is %v, want 1100x900", b)
	}
	colours := map[color.RGBA]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			colours[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)] = true
		}
	}
	if len(colours) < 20 {
		t.Errorf("screenshot has %d colours: nothing was painted", len(colours))
	}
}

func walk(n *html.Node, fn func(*html.Node)) {
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func find(n *html.Node, pred func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	walk(n, func(x *html.Node) {
		if x.Type == html.ElementNode && pred(x) {
			out = append(out, x)
		}
	})
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	if n.Type != html.ElementNode {
		return false
	}
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == class {
			return true
		}
	}
	return false
}

func text(n *html.Node) string {
	var b strings.Builder
	walk(n, func(x *html.Node) {
		if x.Type == html.TextNode {
			b.WriteString(x.Data)
		}
	})
	return b.String()
}
