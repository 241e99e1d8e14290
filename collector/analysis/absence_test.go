package analysis

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFindAbsenceClaim(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		want   bool
		phrase string
	}{
		// Claims, English.
		{"there is no", "There is no such setting in the documentation.", true, "there is no"},
		{"there's no", "There’s no timeout option.", true, "there's no"},
		{"there isn't", "There isn't a flag for that.", true, "there isn't"},
		{"not found", "The variable was not found in config.go.", true, "was not found"},
		{"does not exist", "That endpoint does not exist.", true, "does not exist"},
		{"doesn't exist with code span", "The option `--foo` doesn't exist.", true, "doesn't exist"},
		{"doesn't actually exist", "It doesn't actually exist in v2.", true, "doesn't actually exist"},
		{"no such", "No such variable exists.", true, "no such"},
		{"couldn't find", "I couldn't find any reference to FOO_BAR.", true, "couldn't find"},
		{"could not locate", "I could not locate the handler.", true, "could not locate"},
		{"no mention of", "No mention of rate limits on the page.", true, "no mention"},
		{"isn't documented", "It isn't documented anywhere.", true, "isn't documented"},
		{"it's not supported", "It's not supported by the API.", true, "it's not supported"},
		{"page does not mention", "The page does not mention a retry policy.", true, "does not mention"},
		{"grep returned no matches", "grep returned no matches.", true, "returned no"},
		{"nonexistent", "That is a nonexistent key.", true, "nonexistent"},
		{"claim after a question", "Is it in the docs? No: there is no such section.", true, "there is no"},
		{"when without comma is not a conditional", "When I searched the docs there was no mention of it.", true, "there was no"},
		{"second sentence", "I read the file. The function is not defined there.", true, "is not defined"},
		// Claims, Chinese.
		{"沒有 traditional", "文件中沒有這個設定。", true, "沒有"},
		{"没有 simplified", "配置里没有这个选项。", true, "没有"},
		{"不存在", "该变量不存在。", true, "不存在"},
		{"找不到", "我找不到這個函數。", true, "找不到"},
		{"未找到", "未找到相关配置。", true, "未找到"},
		{"没有 after a non-claim idiom", "没有问题。但是文档里没有提到超时。", true, "没有"},
		// Not claims.
		{"no need", "There is no need to restart the server.", false, ""},
		{"no doubt", "There is no doubt this is the bug.", false, ""},
		{"conditional if", "If the key is not found, the function returns nil.", false, ""},
		{"conditional unless", "Unless it does not exist yet, skip it.", false, ""},
		{"question", "Is there no config file in this repo?", false, ""},
		{"quoted error", "The command printed `No such file or directory`, so I fixed the path.", false, ""},
		{"double-quoted error", `It failed with "command not found" before I installed it.`, false, ""},
		{"fenced code", "Output:\n```\nError: file does not exist\n```\nFixed it.", false, ""},
		{"404 status", "The server returns 404 Not Found for unknown routes.", false, ""},
		{"positive statement", "The setting exists and defaults to 30s.", false, ""},
		{"no problem Chinese", "没有问题，测试都通过了。", false, ""},
		{"did not modify Chinese", "我没有修改任何文件。", false, ""},
		{"whether Chinese", "有没有这个选项？", false, ""},
		{"conditional Chinese", "如果没有找到文件，就返回错误。", false, ""},
		{"question Chinese", "这里不存在吗", false, ""},
		{"empty", "", false, ""},
		{"words containing the phrase", "The nosuch package and notfound.go are fine.", false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := FindAbsenceClaim(tc.text)
			if ok != tc.want || m.Phrase != tc.phrase {
				t.Errorf("FindAbsenceClaim(%q) = %+v, %v; want phrase %q, %v", tc.text, m, ok, tc.phrase, tc.want)
			}
			if AbsenceClaim(tc.text) != tc.want {
				t.Errorf("AbsenceClaim(%q) != %v", tc.text, tc.want)
			}
		})
	}
}

func TestFindAbsenceClaimSentence(t *testing.T) {
	m, ok := FindAbsenceClaim("I read both pages. Sadly there is no retry option.\nAsk again later.")
	if !ok || m.Sentence != "Sadly there is no retry option." {
		t.Errorf("got %+v, %v", m, ok)
	}
}

func FuzzAbsenceClaim(f *testing.F) {
	for _, s := range []string{
		"There is no such setting.", "文件中沒有這個設定。", "If it is not found, return.",
		"`not found`", "\"unterminated", "```", "？？", "\xff\xfe not found", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		m, ok := FindAbsenceClaim(text)
		if ok != AbsenceClaim(text) {
			t.Fatalf("AbsenceClaim disagrees with FindAbsenceClaim on %q", text)
		}
		if ok && (m.Phrase == "" || m.Sentence == "") {
			t.Fatalf("claim without phrase or sentence: %+v", m)
		}
		if !ok && m != (AbsenceMatch{}) {
			t.Fatalf("no claim but a match: %+v", m)
		}
		if ok && !utf8.ValidString(m.Sentence) {
			t.Fatalf("invalid UTF-8 sentence %q", m.Sentence)
		}
		if ok && strings.ContainsAny(m.Sentence, "\n") {
			t.Fatalf("sentence spans lines: %q", m.Sentence)
		}
	})
}
