package docs_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// root is the repository, seen from this package's folder.
const root = ".."

// documented are the Markdown files whose links are checked: the top README,
// the reference pages, and the READMEs of the examples, the charts, the
// function and the tools.
func documented(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	for _, dir := range []string{"docs", "examples", "charts", "functions", "hack"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != filepath.Join(root, dir) && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
				rel, err := filepath.Rel(root, p)
				if err != nil {
					return err
				}
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestLinks follows every relative link of the documentation: its file or
// folder must exist, and its #anchor, on the same page or another, must be
// a heading of that page (by GitHub's slug of it). Links with a scheme
// (https:, mailto:) are not fetched.
func TestLinks(t *testing.T) {
	files := documented(t)
	if !slices.Contains(files, "docs/node.md") {
		t.Fatalf("found no documentation under %s: %v", root, files)
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		anchors[page] = headingAnchors(data)
		return anchors[page]
	}
	checked := 0
	for _, page := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(data) {
			checked++
			if problem := check(page, l.target, anchorsOf); problem != "" {
				t.Errorf("%s:%d: link %q: %s", page, l.line, l.target, problem)
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no links")
	}
}

// check says what is wrong with one link of page, or "".
func check(page, target string, anchorsOf func(string) map[string]bool) string {
	if scheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return ""
	}
	file, anchor, _ := strings.Cut(target, "#")
	file, _, _ = strings.Cut(file, "?")
	file, err := url.PathUnescape(file)
	if err != nil {
		return err.Error()
	}
	dest := page
	if file != "" {
		if strings.HasPrefix(file, "/") {
			return "an absolute path: links must be relative to the page"
		}
		dest = path.Clean(path.Join(path.Dir(page), file))
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return "leaves the repository"
		}
		info, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest)))
		if err != nil {
			return "no such file or folder"
		}
		if info.IsDir() {
			if anchor != "" {
				return "an anchor on a folder"
			}
			return ""
		}
	}
	if anchor == "" {
		return ""
	}
	if !strings.HasSuffix(dest, ".md") {
		return ""
	}
	if !anchorsOf(dest)[strings.ToLower(anchor)] {
		return fmt.Sprintf("%s has no heading whose anchor is #%s", dest, anchor)
	}
	return ""
}

var scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

type link struct {
	target string
	line   int
}

var (
	// inlineLink is [text](target) and ![alt](target), target optionally
	// in angle brackets and followed by a title.
	inlineLink = regexp.MustCompile(`\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)`)
	// referenceLink is a link reference definition: [label]: target.
	referenceLink = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)`)
	// htmlLink is an href or src attribute of inline HTML.
	htmlLink   = regexp.MustCompile(`(?:href|src)="([^"]*)"`)
	inlineCode = regexp.MustCompile("`+[^`]*`+")
)

// links are the link targets of a Markdown page, outside code.
func links(data []byte) []link {
	var out []link
	fenced := ""
	s := bufio.NewScanner(bytes.NewReader(data))
	s.Buffer(nil, 1<<20)
	for n := 1; s.Scan(); n++ {
		line := s.Text()
		trimmed := strings.TrimSpace(line)
		if fence := fenceOf(trimmed); fence != "" {
			switch {
			case fenced == "":
				fenced = fence
				continue
			case strings.HasPrefix(fence, fenced[:1]) && len(fence) >= len(fenced) && strings.TrimLeft(trimmed, fence[:1]) == "":
				fenced = ""
				continue
			}
		}
		if fenced != "" {
			continue
		}
		line = inlineCode.ReplaceAllString(line, "")
		for _, re := range []*regexp.Regexp{inlineLink, referenceLink, htmlLink} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				out = append(out, link{strings.Trim(m[1], "<>"), n})
			}
		}
	}
	return out
}

// fenceOf is the fence a line opens or closes a code block with, or "".
func fenceOf(trimmed string) string {
	for _, c := range []string{"`", "~"} {
		if strings.HasPrefix(trimmed, strings.Repeat(c, 3)) {
			return trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, c))]
		}
	}
	return ""
}

// headingAnchors are the anchors GitHub gives a page's headings, with the
// -1, -2 suffixes of repeated ones, and explicit <a id|name> anchors.
func headingAnchors(data []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := ""
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if fence := fenceOf(trimmed); fence != "" {
			if fenced == "" {
				fenced = fence
			} else if strings.HasPrefix(fence, fenced[:1]) && len(fence) >= len(fenced) {
				fenced = ""
			}
			continue
		}
		if fenced != "" {
			continue
		}
		for _, m := range explicitAnchor.FindAllStringSubmatch(line, -1) {
			out[strings.ToLower(m[1])] = true
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := Slug(m[1])
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

var (
	heading        = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$`)
	explicitAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	linkText       = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag        = regexp.MustCompile(`<[^>]+>`)
)

// Slug is GitHub's anchor for a heading: its text, lower-cased, without
// markup and punctuation, spaces made hyphens.
func Slug(text string) string {
	text = linkText.ReplaceAllString(text, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for text, want := range map[string]string{
		"Kubernetes versions":                             "kubernetes-versions",
		"Supported fields: MPIJob `kubeflow.org/v2beta1`": "supported-fields-mpijob-kubefloworgv2beta1",
		"Launch modes: SSH, kubectl exec or rsh":          "launch-modes-ssh-kubectl-exec-or-rsh",
		"Run-time scaling and the reconciler":             "run-time-scaling-and-the-reconciler",
		"[Flux](flux.md) and `--output-dir`":              "flux-and---output-dir",
		"What differs from Helm 3":                        "what-differs-from-helm-3",
	} {
		if got := Slug(text); got != want {
			t.Errorf("Slug(%q) = %q, want %q", text, got, want)
		}
	}
}

// TestLinksCaught holds the checker to what it must refuse, so that a
// broken link is never passed because the checker stopped looking.
func TestLinksCaught(t *testing.T) {
	page := "docs/links-test.md"
	anchorsOf := func(p string) map[string]bool {
		if p == "README.md" {
			return map[string]bool{"two-commands": true}
		}
		return map[string]bool{"here": true}
	}
	for target, bad := range map[string]bool{
		"node.md":                   false,
		"node.md#nowhere-at-all":    true,
		"../README.md#two-commands": false,
		"../README.md#two-command":  true,
		"#here":                     false,
		"#there":                    true,
		"missing.md":                true,
		"../examples":               false,
		"../examples#x":             true,
		"../../outside.md":          true,
		"/README.md":                true,
		"https://example.com/x#y":   false,
	} {
		if got := check(page, target, anchorsOf) != ""; got != bad {
			t.Errorf("check(%q): refused %v, want %v", target, got, bad)
		}
	}
	md := "See [a](a.md) and ![b](b.png \"t\").\n```\n[c](c.md)\n```\n`[d](d.md)`\n[e]: e.md\n<a href=\"f.md\">f</a>\n"
	var got []string
	for _, l := range links([]byte(md)) {
		got = append(got, l.target)
	}
	if want := []string{"a.md", "b.png", "e.md", "f.md"}; !slices.Equal(got, want) {
		t.Errorf("links: got %v, want %v", got, want)
	}
}

// TestReadmeMapsEveryPage holds README.md to being the map of the
// documentation: it links every page of docs/ and every example's README.
func TestReadmeMapsEveryPage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, l := range links(data) {
		file, _, _ := strings.Cut(l.target, "#")
		linked[path.Clean(file)] = true
	}
	for _, page := range documented(t) {
		if strings.HasPrefix(page, "docs/") || strings.HasPrefix(page, "examples/") && path.Base(page) == "README.md" {
			if !linked[page] {
				t.Errorf("README.md does not link %s", page)
			}
		}
	}
}
