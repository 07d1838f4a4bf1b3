package functions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kustomizationMarker opens every kustomization.yaml WriteKustomization
// writes: a directory whose kustomization starts so is trainfn's to replace.
const kustomizationMarker = "# Written by trainfn render; render again rather than edit."

// WriteKustomization writes objects into dir as a plain kustomization: a
// file per object, named as kpt and kyaml name them
// ([<namespace>/]<kind>_<name>.yaml), and a kustomization.yaml listing them.
// It uses no plugin, so any kustomize builds it, Flux's restricted build
// included.
//
// The directory is replaced as a whole, so objects no longer rendered leave
// it, but only when it is new, empty or written by trainfn before and holding
// nothing else; otherwise nothing is touched. The new content is written
// beside it first, so a failure leaves the old directory as it was.
func WriteKustomization(dir string, objects []*yaml.RNode) error {
	files, err := objectFiles(objects)
	if err != nil {
		return err
	}
	if err := replaceable(dir); err != nil {
		return err
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	staging, err := os.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(dir))+".trainfn-")
	if err != nil {
		return err
	}
	// A staging folder left behind on failure holds only a copy: the
	// write's own error is the one to report.
	defer func() { _ = os.RemoveAll(staging) }()
	if err := writeFiles(staging, files); err != nil {
		return err
	}
	return swap(staging, dir)
}

// objectFiles lays each object out in a file of its own, and adds the
// kustomization that lists them.
func objectFiles(objects []*yaml.RNode) (map[string][]byte, error) {
	files := map[string][]byte{}
	var names []string
	for _, obj := range objects {
		meta, err := obj.GetMeta()
		if err != nil {
			return nil, err
		}
		name := kioutil.CreatePathAnnotationValue("", meta)
		if meta.Name == "" || strings.ContainsAny(meta.Name+meta.Namespace, `/\`) || !filepath.IsLocal(name) {
			return nil, fmt.Errorf("%s %q in namespace %q cannot be written to a file of its own: its name or namespace is not a plain file name", meta.Kind, meta.Name, meta.Namespace)
		}
		if _, taken := files[name]; taken {
			return nil, fmt.Errorf("two objects would be written to %s: %s %q of %s and another of the same kind and name", name, meta.Kind, meta.Name, meta.APIVersion)
		}
		var b bytes.Buffer
		if err := WriteDocuments(&b, []*yaml.RNode{obj}); err != nil {
			return nil, err
		}
		files[name] = b.Bytes()
		names = append(names, name)
	}
	slices.Sort(names)
	listing, err := yaml.Marshal(map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1",
		"kind":       "Kustomization",
		"resources":  names,
	})
	if err != nil {
		return nil, err
	}
	files["kustomization.yaml"] = append([]byte(kustomizationMarker+"\n"), listing...)
	return files, nil
}

// writtenByRender reports whether dir holds a kustomization that
// WriteKustomization wrote.
func writtenByRender(dir string) bool {
	f, err := openKustomization(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(kustomizationMarker)+1)
	n, _ := io.ReadFull(f, head)
	return string(head[:n]) == kustomizationMarker+"\n"
}

// openKustomization opens dir's kustomization.yaml when it is a regular
// file: WriteKustomization writes no other kind, and a named pipe or a
// symbolic link to a device in its place would keep a read from ending.
func openKustomization(dir string) (*os.File, error) {
	path := filepath.Join(dir, "kustomization.yaml")
	if info, err := os.Lstat(path); err != nil {
		return nil, err
	} else if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a file trainfn render writes", path, fileKind(info.Mode()))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlocking, 0)
	if err != nil {
		return nil, err
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, errors.Join(fmt.Errorf("%s is not a regular file", path), f.Close())
	}
	return f, nil
}

// replaceable refuses a directory holding anything trainfn did not write,
// and what cannot be replaced by renaming: a symbolic link, whose target
// would be left behind, and the working directory or one above it.
func replaceable(dir string) error {
	if info, err := os.Lstat(dir); err == nil && info.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link: give the directory it points to", dir)
	} else if err == nil && !info.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(abs, wd); err == nil && filepath.IsLocal(rel) || rel == "." {
			return fmt.Errorf("%s is the working directory or holds it: write into a directory of its own", dir)
		}
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(entries) == 0:
		return nil
	}
	kustomization, err := readKustomization(dir)
	if err != nil || !bytes.HasPrefix(kustomization, []byte(kustomizationMarker+"\n")) {
		return fmt.Errorf("%s is not empty and was not written by trainfn render (its kustomization.yaml does not start with %q): refusing to replace it", dir, kustomizationMarker)
	}
	var listed struct {
		Resources []string `yaml:"resources"`
	}
	if err := yaml.Unmarshal(kustomization, &listed); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, "kustomization.yaml"), err)
	}
	ours := map[string]bool{"kustomization.yaml": true}
	for _, r := range listed.Resources {
		ours[filepath.FromSlash(r)] = true
		ours[filepath.Dir(filepath.FromSlash(r))] = true
	}
	return filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if !ours[rel] {
			return fmt.Errorf("%s was not written by trainfn render: refusing to replace %s", p, dir)
		}
		return nil
	})
}

// readKustomization reads what openKustomization opens, up to
// MaxInputBytes: trainfn's own listing is far smaller.
func readKustomization(dir string) ([]byte, error) {
	f, err := openKustomization(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxInputBytes))
}

func writeFiles(root string, files map[string][]byte) error {
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// swap puts staging in dir's place. Where the system can exchange two
// directories in one rename, dir is never missing, not even for a moment;
// elsewhere the old directory is moved aside first and kept until the new
// one is there. Once the new content is in place the render has succeeded:
// an old copy that cannot be removed (a hidden .<dir>.trainfn-* beside
// dir) is left, not reported as a failure. Concurrent renders into one dir
// each swap in a whole directory; the last one wins.
func swap(staging, dir string) error {
	if err := os.Chmod(staging, 0o755); err != nil {
		return err
	}
	if err := exchange(staging, dir); err == nil {
		// staging now holds the old files; the new ones are in place
		// whether or not they are removed.
		_ = os.RemoveAll(staging)
		return nil
	}
	old := staging + ".old"
	hadOld := true
	if err := os.Rename(dir, old); errors.Is(err, os.ErrNotExist) {
		hadOld = false
	} else if err != nil {
		return err
	}
	if err := os.Rename(staging, dir); err != nil {
		if hadOld {
			return errors.Join(err, os.Rename(old, dir))
		}
		return err
	}
	if hadOld {
		// The new files are in place; the old copy is only clutter.
		_ = os.RemoveAll(old)
	}
	return nil
}
