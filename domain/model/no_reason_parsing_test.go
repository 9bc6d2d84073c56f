package model_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A parked job's state is its JobWait's columns, and a dead letter's stage
// and attempts are columns too (OutboxEvent.FailedIn, JobAttempts), never
// the text written for people beside them: no Go or SQL of the product
// (tests aside) reads a reason or a last error back. The texts a worker
// writes are each built in one place, and the prefixes once parsed ("job
// waits: ", "job failed: ") survive only in their definition and in the
// migrations that carried them over to the columns. A text test cannot
// see every paraphrase; it keeps the old shapes from coming back.
func TestNoStateIsReadOutOfAWaitsReason(t *testing.T) {
	root := filepath.Join("..", "..")
	// Each needle may appear only in the files listed (slash paths from
	// the module's root): its one definition.
	needles := map[string][]string{
		`job waits: `:     {"sql/023_job_waits_backfill.sql"},
		`JobWaitPrefix`:   nil,
		`"waiting for "`:  {"adapters/queue/wait_of.go"},
		`"throttled by "`: {"adapters/queue/wait_of.go"},
		`waiting behind an earlier job of its ordering key`: {"adapters/queue/key_line.go", "sql/023_job_waits_backfill.sql"},
		`"waiting "`:           nil,
		`"job failed: `:        {"domain/model/job.go"},
		`'job failed: `:        {"sql/026_dead_letter_stage_backfill.sql"},
		`JobFailurePrefix`:     {"domain/model/job.go"},
		`JobAttempts(`:         nil,
		`jobAttempts = regexp`: nil,
		`attempts?: `:          {"sql/026_dead_letter_stage_backfill.sql"},
	}
	// A last error handed to a text test (Go), or matched by a prefix or
	// a pattern (SQL).
	reads := []*regexp.Regexp{
		regexp.MustCompile(`strings\.(HasPrefix|HasSuffix|CutPrefix|TrimPrefix|Contains|Index)\([^)]*LastError`),
		regexp.MustCompile(`(?i)starts_with\(\s*(\w+\.)?last_error|(\w+\.)?last_error\s+(NOT\s+)?(I?LIKE|~|SIMILAR)`),
	}
	// Only the migrations that carried the old texts over read them, once.
	readsAllowed := map[string]bool{"sql/023_job_waits_backfill.sql": true, "sql/026_dead_letter_stage_backfill.sql": true}

	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testsupport", "mocks":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, "_test.go") || !(strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".sql")) {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(body)
		for needle, allowed := range needles {
			if strings.Contains(text, needle) && !contains(allowed, rel) {
				t.Errorf("%s holds %q: a reason is written in one place and never read back (model.JobWait, model.OutboxEvent.FailedIn)", rel, needle)
			}
		}
		for _, re := range reads {
			if m := re.FindString(text); m != "" && !readsAllowed[rel] {
				t.Errorf("%s reads state out of a last error (%s): read the state's columns (model.OutboxEvent.WaitKind, FailedIn, JobAttempts)", rel, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
