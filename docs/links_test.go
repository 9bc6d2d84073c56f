package docs

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pages are the Markdown files whose links are checked, relative to the
// repository root: the front page and everything in docs/.
func pages(t *testing.T, root string) []string {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	out := []string{"README.md"}
	for _, f := range found {
		rel, err := filepath.Rel(root, f)
		require.NoError(t, err)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// TestEveryRelativeLinkResolves: every relative link (and image) in
// README.md and docs/*.md names a file or directory of the repository, and
// a link into a Markdown file with an anchor names one of its headings or
// explicit anchors (`<a id>`), as GitHub renders them.
func TestEveryRelativeLinkResolves(t *testing.T) {
	root := ".."
	files := pages(t, root)
	require.Contains(t, files, "docs/architecture.md", "docs/ holds the reference pages")
	assert.Empty(t, brokenLinks(t, root, files))
}

// TestEveryPageIsLinkedFromTheFrontPage: a page of docs/ nobody can reach
// from README.md is a page nobody reads.
func TestEveryPageIsLinkedFromTheFrontPage(t *testing.T) {
	root := ".."
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	var linked []string
	for _, l := range linksOf(string(readme)) {
		path, _, _ := strings.Cut(l.target, "#")
		linked = append(linked, filepath.ToSlash(filepath.Clean(path)))
	}
	for _, page := range pages(t, root)[1:] {
		assert.Contains(t, linked, page, "README.md does not link to %s", page)
	}
}

// TestBrokenLinksAreFound: the checker itself fails on each kind of
// broken link, and passes what GitHub resolves.
func TestBrokenLinksAreFound(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(text), 0o644))
	}
	write("README.md", "# Front\n\n"+
		"[ok](docs/a.md), [ok](docs/a.md#the-api-post-v1stores), [ok](docs/a.md#delivery-dispatcher-queues-workers-1),\n"+
		"[ok](docs/a.md#problem-conflict), [ok](#front), [ok](docs/), [ok](https://example.com/x.md#nowhere),\n"+
		"`[in code](missing.md)`, ![ok](docs/pic.png)\n\n"+
		"```sh\n# not a heading\n[in a block](missing.md)\n```\n\n"+
		"[no file](docs/missing.md), [no anchor](docs/a.md#nowhere), [no heading](#not-a-heading),\n"+
		"[escapes the repository](../outside.md), ![no image](docs/missing.png)\n")
	write("docs/a.md", "# A\n\n## The API: `POST /v1/stores`\n\n## Delivery: Dispatcher, queues, workers\n\n"+
		"## Delivery: Dispatcher, queues, workers\n\n| <a id=\"problem-conflict\"></a>`CONFLICT` |\n\n[back](../README.md#front)\n")
	write("docs/pic.png", "")
	write("docs/open.md", "# Open\n\n```sh\nmake run\n")

	assert.Equal(t, []string{
		"README.md: docs/missing.md: no such file",
		"README.md: docs/a.md#nowhere: no such anchor",
		"README.md: #not-a-heading: no such anchor",
		"README.md: ../outside.md: outside the repository",
		"README.md: docs/missing.png: no such file",
		"docs/open.md: a code block is never closed",
	}, brokenLinks(t, root, []string{"README.md", "docs/a.md", "docs/open.md"}))
}

// brokenLinks lists, for files (relative to root), every relative link
// that does not resolve, as "file: target: why".
func brokenLinks(t *testing.T, root string, files []string) []string {
	t.Helper()
	anchors := map[string][]string{} // Markdown file (relative to root) -> its anchors
	anchorsOf := func(page string) []string {
		if a, ok := anchors[page]; ok {
			return a
		}
		raw, err := os.ReadFile(filepath.Join(root, page))
		require.NoError(t, err)
		anchors[page] = anchorsIn(string(raw))
		return anchors[page]
	}
	var broken []string
	for _, file := range files {
		raw, err := os.ReadFile(filepath.Join(root, file))
		require.NoError(t, err)
		if _, open := prose(string(raw)); open {
			// Everything after it would be code: its links unchecked, its
			// headings no anchors.
			broken = append(broken, file+": a code block is never closed")
		}
		for _, l := range linksOf(string(raw)) {
			if why := resolve(root, file, l.target, anchorsOf); why != "" {
				broken = append(broken, file+": "+l.target+": "+why)
			}
		}
	}
	return broken
}

// resolve says why target, linked from file, does not resolve ("" if it
// does).
func resolve(root, file, target string, anchorsOf func(page string) []string) string {
	path, anchor, _ := strings.Cut(target, "#")
	if p, err := url.PathUnescape(path); err == nil {
		path = p
	}
	page := file
	if path != "" {
		page = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
		if page == ".." || strings.HasPrefix(page, "../") {
			return "outside the repository"
		}
		if _, err := os.Stat(filepath.Join(root, page)); err != nil {
			return "no such file"
		}
	}
	if anchor == "" || !strings.HasSuffix(page, ".md") {
		return "" // anchors of other files (#L10 of a source file) are GitHub's
	}
	if !slices.Contains(anchorsOf(page), anchor) {
		return "no such anchor"
	}
	return ""
}

type link struct{ target string }

var (
	// linkRE matches the target of an inline link or image, `](target)`
	// or `](target "title")`.
	linkRE = regexp.MustCompile(`\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)`)
	// htmlRE matches the targets of HTML links and images.
	htmlRE = regexp.MustCompile(`(?:href|src)="([^"]+)"`)
	// codeSpanRE matches inline code, where brackets are not links.
	codeSpanRE = regexp.MustCompile("`[^`]*`")
	// idRE matches an explicit anchor, `<a id="x">` or `name="x"`.
	idRE      = regexp.MustCompile(`\b(?:id|name)="([^"]+)"`)
	headingRE = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	schemeRE  = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// linksOf returns the relative links of a Markdown text, outside code
// blocks and code spans. Links with a scheme (https:, mailto:) are not
// ours to check.
func linksOf(text string) []link {
	var out []link
	for _, line := range proseLines(text) {
		line = codeSpanRE.ReplaceAllString(line, "")
		for _, re := range []*regexp.Regexp{linkRE, htmlRE} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				if target := m[1]; !schemeRE.MatchString(target) && !strings.HasPrefix(target, "//") {
					out = append(out, link{target: target})
				}
			}
		}
	}
	return out
}

// anchorsIn returns the anchors GitHub gives a Markdown text: a slug per
// heading (a repeated slug gets -1, -2, …) and every explicit id.
func anchorsIn(text string) []string {
	var out []string
	seen := map[string]int{}
	for _, line := range proseLines(text) {
		for _, m := range idRE.FindAllStringSubmatch(line, -1) {
			out = append(out, m[1])
		}
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		s := slug(m[2])
		if n := seen[s]; n > 0 {
			out = append(out, s+"-"+strconv.Itoa(n))
		} else {
			out = append(out, s)
		}
		seen[s]++
	}
	return out
}

var (
	inlineLinkRE = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTagRE    = regexp.MustCompile(`<[^>]+>`)
)

// slug is GitHub's anchor for a heading: its text as rendered (link
// targets and tags dropped), lower-cased, everything but letters, marks,
// digits, connectors (_), hyphens and spaces removed, spaces made hyphens.
func slug(heading string) string {
	heading = inlineLinkRE.ReplaceAllString(heading, "$1")
	heading = htmlTagRE.ReplaceAllString(heading, "")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r) || unicode.Is(unicode.Pc, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// proseLines returns the lines of a Markdown text outside fenced code
// blocks (``` or ~~~), where neither links nor headings are.
func proseLines(text string) []string {
	lines, _ := prose(text)
	return lines
}

// prose returns the lines outside fenced code blocks, and whether the
// text ends inside one.
func prose(text string) (lines []string, open bool) {
	var out []string
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		out = append(out, line)
	}
	return out, fence != ""
}
