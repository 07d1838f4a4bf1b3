package testtool

import (
	"os"
	"path/filepath"
	"testing"
)

// Files reads every file under dir, by its slash-separated path relative to
// dir: a directory's content in one comparable value. A symbolic link is
// recorded by its target, not followed.
func Files(t testing.TB, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			files[filepath.ToSlash(rel)] = "symbolic link to " + target
			return err
		}
		b, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
