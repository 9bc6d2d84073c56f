// Package docs holds the project's documentation, one Markdown file per
// audience, each linked from the front page (README.md). It has no code:
// its test checks that every relative link in README.md and docs/*.md,
// anchors included, leads somewhere.
package docs
