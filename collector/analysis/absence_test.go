package analysis

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxaudit/ctxaudit/schema"
)

// The detector's precision and recall are measured on the labeled corpus
// (absenceeval, `make eval`); these cases pin the rules' edges one by one.
func TestJudgeAbsence(t *testing.T) {
	const (
		none     = schema.AbsenceNone
		scoped   = schema.AbsenceScoped
		unscoped = schema.AbsenceUnscoped
	)
	tests := []struct {
		text   string
		want   schema.Absence
		phrase string // when set, the trigger reported
		scope  string // when set, the scope reported
	}{
		// Unscoped claims.
		{"The suite ran; no failing tests were found in the output, every package reports ok.", unscoped, "no failing tests were found", ""},
		{"There is no such setting in the documentation.", unscoped, "there is no", ""},
		{"There’s no timeout option.", unscoped, "there’s no", ""},
		{"The variable was not found in config.go.", unscoped, "was not found", ""},
		{"That endpoint does not exist.", unscoped, "does not exist", ""},
		{"The option `--foo` doesn't exist.", unscoped, "doesn't exist", ""},
		{"I couldn't find any reference to FOO_BAR.", unscoped, "couldn't find", ""},
		{"None of the three handlers registers a retry hook.", unscoped, "", ""},
		{"Not a single test in the package covers the timeout path.", unscoped, "not a single", ""},
		{"It's not exported as a type.", unscoped, "'s not exported", ""},
		{"The CompactionEntry has `tokensBefore` but not `tokensAfter`.", unscoped, "", ""},
		{"`userMessageText` is defined in the theme but never used.", unscoped, "never used", ""},
		{"No errors, the build passed.", unscoped, "no errors", ""},
		{"Missing chalk import in markdown.test.ts:", unscoped, "", ""},
		{"grep returned no matches.", unscoped, "returned no", ""},
		{"沒有任何環境變數可以關閉上傳。", unscoped, "沒有任何", ""},
		{"该变量不存在。", unscoped, "不存在", ""},
		{"查無此設定。", unscoped, "查無", ""},
		{"程式碼中並未發現任何重試邏輯。", unscoped, "並未發現", ""},
		{"没有问题。但是文档里没有提到超时。", unscoped, "没有提到", ""},
		{"The cron job isn't scheduled in the production manifest.", unscoped, "isn't scheduled", ""},
		{"`--dry-run` is not a valid option for this command.", unscoped, "is not a valid option", ""},
		{"The tool doesn't take a timeout option.", unscoped, "", ""},
		{"The suite passed with no failures.", unscoped, "with no failures", ""},
		{"The migration adds the column but no index.", unscoped, "but no index", ""},
		{"pytest collected 0 items.", unscoped, "0 items", ""},
		{"The search turned up nothing.", unscoped, "turned up nothing", ""},
		{"README 完全沒提 Windows。", unscoped, "沒", ""},
		{"handler 從來不檢查 ctx.Err()。", unscoped, "從來不", ""},
		{"搜尋結果是空的。", unscoped, "是空的", ""},
		{"测试全部通过，0 个失败。", unscoped, "0 个失败", ""},
		{"日誌裡沒有超時的任務。", unscoped, "沒有", ""},
		{"我能讀到的處理器都沒有檢查簽章。", scoped, "沒有", ""},
		{"Neither the Makefile nor the CI script runs the linter.", unscoped, "", ""},
		{"Didn't find anything about it in the wiki.", unscoped, "didn't find", ""},
		{"The release notes are silent on the new default.", unscoped, "are silent on", ""},
		{"`API_KEY` is unset in the container.", unscoped, "is unset", ""},
		{"There doesn't appear to be any caching layer.", unscoped, "", ""},
		{"The client library offers no hook for retries.", unscoped, "offers no", ""},
		{"It looks like nobody wrote a migration for it.", unscoped, "nobody wrote", ""},
		{"這個容器沒啟動成功。", none, "", ""},
		{"這個分支還沒合進 main。", none, "", ""},
		{"文件沒更新，還是舊的參數。", none, "", ""},
		{"The wiki 對這個旗標隻字未提。", unscoped, "隻字未提", ""},
		{"匯出的 JSON 省略了 createdAt 欄位。", unscoped, "省略", ""},
		{"我讀過的 diff 裡，沒有修改任何 migration。", scoped, "沒有", ""},
		// Scoped claims.
		{"In the first 2,000 lines there is no retryUpload.", scoped, "there is no", "the first 2,000 lines"},
		{"The preview does not show UPLOAD_DISABLED.", scoped, "does not show upload_disabled", "The preview"},
		{"前 100 行沒有 retryUpload。", scoped, "沒有", "前 100 行"},
		{"目前讀到的內容裡沒有這個設定。", scoped, "沒有", "讀到的"},
		{"I couldn't find it in what I've read so far.", scoped, "couldn't find", "in what I've read"},
		{"The section of the report I could load has no totals.", scoped, "has no", "section of the report I could load"},
		{"我打得開的那部分日誌裡沒有錯誤。", scoped, "沒有", "的那部分"},
		{"The partial build output shows no errors.", scoped, "shows no", "The partial build output"},
		{"In the rows of the table that were returned, none is empty.", scoped, "", "rows of the table that were returned"},
		{"Of the messages I received, none has a timestamp.", scoped, "", "Of the messages I received"},
		{"In those 2,000 lines there is no deadlock report.", scoped, "there is no", "In those 2,000 lines"},
		{"Among the 30 results the API returned, none is archived.", scoped, "", "the 30 results the API returned"},
		{"In what the dashboard showed me, no panel has data.", scoped, "", "what the dashboard showed me"},
		{"The trimmed `journalctl` output has no segfault.", scoped, "has no", ""},
		{"Rows 1-900 of the sheet have no blanks.", scoped, "", "Rows 1-900"},
		{"從我看得到的日誌來看，沒有任何重試。", scoped, "沒有任何", "我看得到的"},
		{"返回的 300 条记录里没有重复。", scoped, "没有", "返回的 300 条"},
		{"排名前 20 的帳號都沒有異常。", scoped, "沒有", "排名前 20"},
		// A scope in a clause set against the claim does not reach it.
		{"The first two services forward it, but the third has no propagator.", unscoped, "has no", ""},
		{"前兩個服務都有轉送，但第三個沒有設定 propagator。", unscoped, "沒有", ""},
		{"The output I got was cut off, but within it there are no errors.", scoped, "there are no", ""},
		{"目前沒看到任何錯誤。", scoped, "沒看到任何", "目前"},
		{"I haven't found the handler yet.", scoped, "haven't found", "yet"},
		{"Lines 1-500 don't mention a timeout.", scoped, "don't mention a", "Lines 1-500"},
		// Scoped and unscoped in one answer: the unscoped one decides.
		{"The first 200 lines have no match. There is no such flag.", unscoped, "there is no", ""},
		// Not claims.
		{"Don't worry, the build passed.", none, "", ""},
		{"I'm not sure which version you use.", none, "", ""},
		{"That flag is no longer needed.", none, "", ""},
		{"Nothing else to do.", none, "", ""},
		{"There is no need to restart the server.", none, "", ""},
		{"Is there no config file in this repo?", none, "", ""},
		{"If the key is not found, the function returns nil.", none, "", ""},
		{"Make sure there are no stale locks before you start.", none, "", ""},
		{"The command printed `No such file or directory`, so I fixed the path.", none, "", ""},
		{`It failed with "command not found" before I installed it.`, none, "", ""},
		{"Output:\n```\nError: file does not exist\n```\nFixed it.", none, "", ""},
		{"> grep: no matches found\nI widened the pattern.", none, "", ""},
		{"The server returns 404 Not Found for unknown routes.", none, "", ""},
		{"Let me add the missing imports:", none, "", ""},
		{"I don't have a way to directly interact with the chat UI.", none, "", ""},
		{"I made no changes to the tests.", none, "", ""},
		{"我沒有修改任何文件。", none, "", ""},
		{"The cache isn't invalidated on logout, so stale data shows up.", none, "", ""},
		{"That isn't needed anymore.", none, "", ""},
		{"It's not needed after the upgrade.", none, "", ""},
		{"The page didn't load; it timed out after 30 seconds.", none, "", ""},
		{"The import job doesn't finish within the window.", none, "", ""},
		{"Critical rules:\n- No direct pushes to main\n- Never log tokens\n\nThe build is green.", none, "", ""},
		{"它沒有阻塞事件迴圈。", none, "", ""},
		{"測試沒過，有兩個失敗。", none, "", ""},
		{"這次沒改到 schema。", none, "", ""},
		{"遷移還沒跑。", none, "", ""},
		{"我這邊沒有其他要補充的。", none, "", ""},
		{"沒事，這個警告可以忽略。", none, "", ""},
		{"The port isn't hard-coded; it comes from the environment.", none, "", ""},
		{"我沒法連到那台主機。", none, "", ""},
		{"試了十次都沒能重現。", none, "", ""},
		{"我把缺少的欄位補上了。", none, "", ""},
		{"升級之後程式沒再崩潰。", none, "", ""},
		{"這個改動沒有導致任何測試失敗。", none, "", ""},
		{"沒有設定檔時，程式會用預設值。", none, "", ""},
		{"The part of the log I saw has no errors, but 900 lines were omitted.", scoped, "has no", ""},
		{"我看到的部分沒有錯誤，不過有 900 行被省略了。", scoped, "沒有", ""},
		{"The script exits when there are no staged files.", none, "", ""},
		{"The consumer doesn't lose messages on restart.", none, "", ""},
		{"The mock server never responded to the probe.", none, "", ""},
		{"沒有新資料的時候，任務會跳過。", none, "", ""},
		{"這一列沒有預設值。", unscoped, "沒有", ""},
		{"所有 handler 都沒有處理逾時。", unscoped, "沒有", ""},
		{"作業慢是因為沒有批次寫入。", none, "", ""},
		{"還原前請確定沒有程序在寫入。", none, "", ""},
		{"`Cargo.toml` declares serde without the derive feature.", unscoped, "", ""},
		{"The SBOM lists log4j-core and no other log4j artifact.", unscoped, "and no other log4j", ""},
		{"In the chunk I have, nothing sets the timeout.", scoped, "nothing sets", "the chunk I have"},
		{"From what's visible, the migration adds no index.", scoped, "", "what's visible"},
		{"I only saw part of the output, and it has no errors.", scoped, "has no", ""},
		{"我只看了一部分日誌，裡面沒有 panic。", scoped, "沒有", ""},
		{"從現有的輸出看，沒有任何重試。", scoped, "沒有任何", ""},
		{"The query returns no faster than before.", none, "", ""},
		{"No one can merge to main without review.", none, "", ""},
		{"There are no guarantees about ordering across partitions.", none, "", ""},
		{"點按鈕之後什麼都沒發生。", none, "", ""},
		{"The sample of 500 rows I pulled has no nulls.", scoped, "has no", ""},
		{"As far as I've scrolled, nothing references the flag.", scoped, "", "As far as I've scrolled"},
		{"The guide skips the upgrade path entirely.", unscoped, "", ""},
		{"法文翻譯檔缺了 37 個鍵。", unscoped, "缺了 37 個", ""},
		{"我還沒在設定裡找到重試策略。", scoped, "", "還沒"},
		{"在我翻得到的範圍內沒有錯誤。", scoped, "沒有", ""},
		{"沒有正式環境的權限，我只能做到這裡。", none, "", ""},
		{"Before merging, double-check there are no debug logs.", none, "", ""},
		{"Release checklist:\n- No open P1 bugs\n- Changelog updated", none, "", ""},
		{"The worker stalled because Redis never answered the call.", none, "", ""},
		{"没有问题，测试都通过了。", none, "", ""},
		{"有没有这个选项？", none, "", ""},
		{"如果没有找到文件，就返回错误。", none, "", ""},
		{"这里不存在吗", none, "", ""},
		{"", none, "", ""},
	}
	for _, tc := range tests {
		m, ok := JudgeAbsence(tc.text)
		got := schema.AbsenceNone
		if ok {
			got = m.Absence
		}
		if got != tc.want || tc.phrase != "" && m.Phrase != tc.phrase || tc.scope != "" && m.Scope != tc.scope {
			t.Errorf("JudgeAbsence(%q) = %s %+v; want %s phrase %q scope %q", tc.text, got, m, tc.want, tc.phrase, tc.scope)
		}
		if AbsenceOf(tc.text) != tc.want || AbsenceClaim(tc.text) != tc.want.IsClaim() {
			t.Errorf("AbsenceOf/AbsenceClaim(%q) disagree with JudgeAbsence", tc.text)
		}
	}
}

func TestJudgeAbsenceScopeRange(t *testing.T) {
	for _, tc := range []struct {
		text string
		want ScopeRange
	}{
		{"In the first 2,000 lines there is no retryUpload.", ScopeRange{Known: true, Start: 1, End: 2000, Unit: schema.UnitLines}},
		{"Lines 2001-2600 don't define it.", ScopeRange{Known: true, Start: 2001, End: 2600, Unit: schema.UnitLines}},
		{"前兩千行沒有 retryUpload。", ScopeRange{Known: true, Start: 1, End: 2000, Unit: schema.UnitLines}},
		{"第 1 到 500 行沒有這個函式。", ScopeRange{Known: true, Start: 1, End: 500, Unit: schema.UnitLines}},
		{"The first 5,000 characters don't mention it.", ScopeRange{Known: true, Start: 0, End: 5000, Unit: schema.UnitChars}},
		{"In the last 500 lines of the log there is no error.", ScopeRange{Known: true, End: 500, Unit: schema.UnitLines, FromEnd: true}},
		{"The final 2,000 characters don't mention it.", ScopeRange{Known: true, End: 2000, Unit: schema.UnitChars, FromEnd: true}},
		{"The preview does not show it.", ScopeRange{}},
	} {
		m, ok := JudgeAbsence(tc.text)
		if !ok || m.Absence != schema.AbsenceScoped || m.Range != tc.want {
			t.Errorf("JudgeAbsence(%q) = %+v, %v; want scoped with range %+v", tc.text, m, ok, tc.want)
		}
	}
}

func TestJudgeAbsenceSentenceAndClause(t *testing.T) {
	m, ok := JudgeAbsence("I read both pages. Sadly, there is **no** `retry` option.\nAsk again later.")
	if !ok || m.Sentence != "Sadly, there is **no** `retry` option." || m.Clause != "there is **no** `retry` option." {
		t.Errorf("got %+v, %v", m, ok)
	}
}

func FuzzAbsenceClaim(f *testing.F) {
	for _, s := range []string{
		"There is no such setting.", "文件中沒有這個設定。", "If it is not found, return.",
		"`not found`", "\"unterminated", "```", "？？", "\xff\xfe not found", "",
		"In the first 2,000 lines there is no X.", "前 100 行沒有…", "> quoted\nnone of them",
		"“curly” ’s not defined", "前一二三四五六七八九十百千萬行沒有", "lines 99999999999999999999-1 lack it",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		m, ok := JudgeAbsence(text)
		if ok != AbsenceClaim(text) || AbsenceOf(text).IsClaim() != ok {
			t.Fatalf("AbsenceClaim/AbsenceOf disagree with JudgeAbsence on %q", text)
		}
		if !ok {
			if m != (AbsenceMatch{}) {
				t.Fatalf("no claim but a match: %+v", m)
			}
			return
		}
		if m.Absence != schema.AbsenceScoped && m.Absence != schema.AbsenceUnscoped {
			t.Fatalf("claim of kind %q", m.Absence)
		}
		if m.Phrase == "" || m.Clause == "" || m.Sentence == "" {
			t.Fatalf("claim without phrase, clause or sentence: %+v", m)
		}
		if (m.Scope != "") != (m.Absence == schema.AbsenceScoped) {
			t.Fatalf("scope %q on a %s claim", m.Scope, m.Absence)
		}
		if m.Range.Known && m.Range.Start > m.Range.End {
			t.Fatalf("range %+v runs backwards", m.Range)
		}
		for _, s := range []string{m.Phrase, m.Clause, m.Sentence, m.Scope} {
			if !utf8.ValidString(s) || strings.ContainsAny(s, "\n\r") {
				t.Fatalf("reported text %q is not one valid line", s)
			}
		}
		if !strings.Contains(m.Sentence, m.Clause) {
			t.Fatalf("clause %q is not in its sentence %q", m.Clause, m.Sentence)
		}
	})
}

// The rules match "no" followed by any white space (`no\s+`); the idiom check
// after them found the trigger's "no" only before a space, so "no" and a tab
// or form feed read the text from the wrong offset — from before the start of
// the clause when it opened it, which panicked (the fuzz input "no\fno 0").
// Tabs and form feeds must judge as spaces do.
func TestAbsenceNoBeforeAnyWhiteSpace(t *testing.T) {
	for _, spaced := range []string{
		"No need to worry about it.",
		"No problem, I will add it.",
		"No tests cover the parser.",
		"It adds the column and no index.",
		"It adds the column but no need to migrate.",
		"no no 0",
	} {
		want, wantOK := JudgeAbsence(spaced)
		for _, ws := range []string{"\t", "\f"} {
			text := strings.ReplaceAll(spaced, "no ", "no"+ws)
			text = strings.ReplaceAll(text, "No ", "No"+ws)
			got, ok := JudgeAbsence(text)
			if ok != wantOK || got.Absence != want.Absence {
				t.Errorf("%q: claim %v (%s); with spaces %v (%s)", text, ok, got.Absence, wantOK, want.Absence)
			}
		}
	}
}
