package model_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A parked job's state is its JobWait's columns, never the text written
// for people beside them: no Go or SQL of the product (tests aside) reads
// a reason back. The texts a worker writes are each built in one place,
// and the prefix the workers once wrote ("job waits: ") survives only in
// the migration that carried it over to the columns. A text test cannot
// see every paraphrase; it keeps the old shapes from coming back, and
// names the one parse of a reason that remains (a job's give-up record).
func TestNoStateIsReadOutOfAWaitsReason(t *testing.T) {
	root := filepath.Join("..", "..")
	// Each needle may appear only in the files listed (slash paths from
	// the module's root): its one definition.
	needles := map[string][]string{
		`job waits: `:     {"sql/023_job_waits_backfill.sql"},
		`JobWaitPrefix`:   nil,
		`"waiting for "`:  {"adapters/queue/outage.go"},
		`"throttled by "`: {"adapters/queue/later.go"},
		`waiting behind an earlier job of its ordering key`: {"adapters/queue/key_line.go", "sql/023_job_waits_backfill.sql"},
		`"waiting "`: nil,
	}
	// A last error handed to a text test (Go), or matched by a prefix or
	// a pattern (SQL).
	reads := []*regexp.Regexp{
		regexp.MustCompile(`strings\.(HasPrefix|HasSuffix|CutPrefix|TrimPrefix|Contains|Index)\([^)]*LastError`),
		regexp.MustCompile(`(?i)starts_with\(\s*(\w+\.)?last_error|(\w+\.)?last_error\s+(NOT\s+)?(I?LIKE|~|SIMILAR)`),
	}
	// The give-up record of a job is still told apart by its prefix
	// (model.JobFailurePrefix): a dead letter's stage, and its attempts.
	readsAllowed := map[string]bool{"domain/dispatch/admin.go": true, "sql/023_job_waits_backfill.sql": true}

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
				t.Errorf("%s holds %q: a wait's reason is written in one place and never read back (model.JobWait)", rel, needle)
			}
		}
		for _, re := range reads {
			if m := re.FindString(text); m != "" && !readsAllowed[rel] {
				t.Errorf("%s reads state out of a last error (%s): read the wait's columns (model.OutboxEvent.WaitKind)", rel, m)
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
