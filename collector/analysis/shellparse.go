package analysis

import "strings"

// This file splits a shell command line into pipelines of simple commands,
// just far enough to see which files an agent's command reads and how: words
// with quotes removed, pipes, lists (; && || &), stdin/stdout redirections and
// heredocs. It is not a shell; anything it does not understand ends up as an
// ordinary word, never as an error, and it never panics.

// stage is one simple command inside a pipeline.
type stage struct {
	args []string
	// stdin is a file redirected to standard input ("< file"), if any.
	stdin string
	// stdoutAway: standard output went to a file or /dev/null, so the model
	// saw none of what this stage printed.
	stdoutAway bool
}

// pipeline is a list of stages joined by "|".
type pipeline []stage

// maxShellInput bounds the text parsed; commands longer than this are
// analysed on their prefix (real agent commands are far shorter).
const maxShellInput = 64 << 10

// parseShell splits cmd into pipelines in order of execution.
func parseShell(cmd string) []pipeline {
	if len(cmd) > maxShellInput {
		cmd = cmd[:maxShellInput]
	}
	p := shellParser{s: cmd}
	p.run()
	return p.out
}

type shellParser struct {
	s        string
	i        int
	out      []pipeline
	cur      pipeline
	st       stage
	heredocs []heredoc
}

type heredoc struct {
	delim     string
	stripTabs bool
}

func (p *shellParser) run() {
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			p.i++
		case c == '\\' && p.i+1 < len(p.s) && p.s[p.i+1] == '\n':
			p.i += 2
		case c == '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		case c == '\n':
			p.endPipeline()
			p.i++
			p.skipHeredocBodies()
		case c == ';' || c == '(' || c == ')':
			p.endPipeline()
			p.i++
		case c == '|':
			if p.peek(1) == '|' {
				p.endPipeline()
				p.i += 2
				continue
			}
			p.endStage()
			p.i++
			if p.peek(0) == '&' { // "|&" pipes stderr too
				p.i++
			}
		case c == '&':
			switch p.peek(1) {
			case '&':
				p.endPipeline()
				p.i += 2
			case '>':
				p.i++ // "&>" / "&>>": both streams to a file
				p.redirect(1)
			default:
				p.endPipeline()
				p.i++
			}
		case c == '>' || c == '<':
			p.redirect(-1)
		default:
			w, fd := p.word()
			if fd >= 0 {
				p.redirect(fd)
				continue
			}
			p.st.args = append(p.st.args, w)
		}
	}
	p.endPipeline()
}

func (p *shellParser) peek(k int) byte {
	if p.i+k < len(p.s) {
		return p.s[p.i+k]
	}
	return 0
}

func (p *shellParser) endStage() {
	if len(p.st.args) > 0 || p.st.stdin != "" {
		p.cur = append(p.cur, p.st)
	}
	p.st = stage{}
}

func (p *shellParser) endPipeline() {
	p.endStage()
	if len(p.cur) > 0 {
		p.out = append(p.out, p.cur)
	}
	p.cur = nil
}

// redirect parses a redirection operator at p.i (after any fd number) and
// its target word. fd is the explicit descriptor, or -1 for the default.
func (p *shellParser) redirect(fd int) {
	in := p.peek(0) == '<'
	p.i++
	if in {
		switch p.peek(0) {
		case '<':
			p.i++
			if p.peek(0) == '<' { // here-string: stdin is a literal
				p.i++
				p.skipSpaces()
				p.word()
				return
			}
			strip := p.peek(0) == '-'
			if strip {
				p.i++
			}
			p.skipSpaces()
			d, _ := p.word()
			p.heredocs = append(p.heredocs, heredoc{delim: d, stripTabs: strip})
			return
		case '>', '&':
			p.i++
		}
		p.skipSpaces()
		w, _ := p.word()
		if fd <= 0 && !strings.HasPrefix(w, "&") {
			p.st.stdin = w
		}
		return
	}
	dup := false
	switch p.peek(0) {
	case '>', '|':
		p.i++
	case '&':
		p.i++
		dup = true
	}
	p.skipSpaces()
	w, _ := p.word()
	if dup && (w == "-" || allDigits(w)) {
		return // ">&2", "2>&1": streams merged, output still shown
	}
	if fd == -1 || fd == 1 {
		p.st.stdoutAway = true
	}
}

func (p *shellParser) skipSpaces() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// word reads one word, removing quotes. When the word is a bare number
// directly followed by a redirection ("2>"), it returns that number as fd
// (and consumes only the digits); otherwise fd is -1.
func (p *shellParser) word() (w string, fd int) {
	start := p.i
	var b strings.Builder
	quoted := false
loop:
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch c {
		case ' ', '\t', '\r', '\n', ';', '|', '&', '<', '>', '(', ')':
			if c == '(' && p.i > start && p.s[p.i-1] == '$' {
				// "$(": keep the substitution, raw, inside the word.
				p.i = p.skipBalanced(p.i+1, '(', ')')
				b.WriteString(p.s[start:p.i])
				start = p.i
				continue
			}
			break loop
		case '\\':
			b.WriteString(p.s[start:p.i])
			if p.i+1 < len(p.s) {
				b.WriteByte(p.s[p.i+1])
				p.i += 2
			} else {
				p.i++
			}
			start = p.i
		case '\'':
			quoted = true
			b.WriteString(p.s[start:p.i])
			end := strings.IndexByte(p.s[p.i+1:], '\'')
			if end < 0 {
				b.WriteString(p.s[p.i+1:])
				p.i = len(p.s)
			} else {
				b.WriteString(p.s[p.i+1 : p.i+1+end])
				p.i += end + 2
			}
			start = p.i
		case '"':
			quoted = true
			b.WriteString(p.s[start:p.i])
			p.i++
			for p.i < len(p.s) && p.s[p.i] != '"' {
				if p.s[p.i] == '\\' && p.i+1 < len(p.s) && strings.IndexByte("\"\\$`\n", p.s[p.i+1]) >= 0 {
					p.i++
				}
				b.WriteByte(p.s[p.i])
				p.i++
			}
			p.i++ // closing quote (or one past the end)
			p.i = min(p.i, len(p.s))
			start = p.i
		case '`':
			end := strings.IndexByte(p.s[p.i+1:], '`')
			if end < 0 {
				p.i = len(p.s)
			} else {
				p.i += end + 2
			}
		default:
			p.i++
		}
	}
	b.WriteString(p.s[start:p.i])
	w = b.String()
	if !quoted && w != "" && len(w) <= 2 && allDigits(w) && (p.peek(0) == '>' || p.peek(0) == '<') {
		return "", int(w[0] - '0')
	}
	return w, -1
}

// skipBalanced returns the index just past the close that balances the open
// at i-1, or the end of the input.
func (p *shellParser) skipBalanced(i int, open, close byte) int {
	depth := 1
	for ; i < len(p.s); i++ {
		switch p.s[i] {
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(p.s)
}

// skipHeredocBodies skips the bodies of the heredocs opened on the line just
// ended; their text is data, not commands.
func (p *shellParser) skipHeredocBodies() {
	for _, h := range p.heredocs {
		for p.i < len(p.s) {
			end := strings.IndexByte(p.s[p.i:], '\n')
			line := p.s[p.i:]
			if end >= 0 {
				line = p.s[p.i : p.i+end]
				p.i += end + 1
			} else {
				p.i = len(p.s)
			}
			if h.stripTabs {
				line = strings.TrimLeft(line, "\t")
			}
			if strings.TrimRight(line, "\r") == h.delim {
				break
			}
		}
	}
	p.heredocs = p.heredocs[:0]
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
