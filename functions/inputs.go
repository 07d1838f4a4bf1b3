package functions

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// MaxInputBytes is the most trainfn reads from any one input: a file,
// standard input (a KRM function's ResourceList too) or a pipe. It is far
// more than any repository's manifests come to (the largest stream the
// tests render is 100 MB), and it makes an input that never ends, a
// device such as /dev/zero or a process that keeps writing, stop there
// rather than fill memory.
const MaxInputBytes = 128 << 20

// textCheckBytes is how much of a stream is checked for being text before
// the rest is read: a binary input, /dev/zero or /dev/urandom say, shows
// in its first bytes, and is refused before it costs memory.
const textCheckBytes = 64 << 10

// readLimited reads r to its end, or refuses it: past MaxInputBytes, or
// when its first bytes are no YAML text (the Diagnostic checkText gives).
// name names the input in messages.
func readLimited(name string, r io.Reader) ([]byte, *Diagnostic, error) {
	head := make([]byte, textCheckBytes)
	n, err := io.ReadFull(r, head)
	head = head[:n]
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return head, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	// A UTF-8 sequence the read cut in two is no problem of the text.
	if d, at := textProblem(name, head); d != nil && at < len(head)-utf8.UTFMax {
		return nil, d, nil
	}
	return readRest(name, r, head)
}

// readRest reads r to its end after what data holds, as io.ReadAll does,
// or refuses it past MaxInputBytes.
func readRest(name string, r io.Reader, data []byte) ([]byte, *Diagnostic, error) {
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		// Never more than one byte past the bound, however append grew
		// the buffer.
		n, err := r.Read(data[len(data):min(cap(data), MaxInputBytes+1)])
		data = data[:len(data)+n]
		switch {
		case len(data) > MaxInputBytes:
			return nil, tooLarge(name, "more than"), nil
		case errors.Is(err, io.EOF):
			return data, nil, nil
		case err != nil:
			return nil, nil, err
		}
	}
}

// tooLarge refuses an input of more than MaxInputBytes; size says how much
// more, as far as it is known.
func tooLarge(name, size string) *Diagnostic {
	return &Diagnostic{Severity: Error, Source: Source{Path: name},
		Message: fmt.Sprintf("%s %d bytes (%d MiB), the most trainfn reads from one input: split the documents into several files; is it a device or a process that never stops writing?",
			size, MaxInputBytes, MaxInputBytes>>20)}
}

// readFile reads a file named on the command line, whatever it is: a
// regular file, or a pipe such as the one `<(kustomize build)` names, or
// a device, which the user chose to read. Only its size is bounded.
func readFile(path string) ([]byte, *Diagnostic, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return readOpened(path, f)
}

// readOpened reads an opened file: a regular one larger than
// MaxInputBytes is refused without being read.
func readOpened(name string, f *os.File) ([]byte, *Diagnostic, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return readLimited(name, f)
	}
	if info.Size() > MaxInputBytes {
		return nil, tooLarge(name, fmt.Sprintf("%d bytes, more than", info.Size())), nil
	}
	// Its size is known: read at once, without growing a buffer.
	return readRest(name, f, make([]byte, 0, info.Size()+1))
}

// directory is a directory given to render, and what it holds: the YAML
// files to read, and those it refuses to, with why.
type directory struct {
	// name is the directory as the user wrote it, which messages name
	// its files under.
	name string
	// resolved is the directory with every symbolic link resolved, which
	// the files must be inside.
	resolved string
	// files are the files to read, in lexical order of their paths.
	files   []dirFile
	refused Diagnostics
}

// dirFile is a file to read in a directory: where it was found, relative
// to the directory, which messages name it by, and the regular file to
// open there, the target of a symbolic link found there.
type dirFile struct{ at, open string }

// listDirectory finds the YAML documents of a directory: its .yaml, .yml
// and .json files, recursively, in lexical order, skipping hidden ones and
// what render --output-dir wrote. Only regular files are read, and
// symbolic links to regular files inside the directory, as kustomize
// reads only files inside its root: a link that leads out of it, a named
// pipe, a socket or a device is refused, and never opened. Files of other
// names are not read, whatever they are.
func listDirectory(name string) (*directory, error) {
	resolved, err := filepath.EvalSymlinks(name)
	if err != nil {
		return nil, err
	}
	d := &directory{name: name, resolved: resolved}
	err = filepath.WalkDir(resolved, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == resolved {
			return nil
		}
		if strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if e.IsDir() {
			if writtenByRender(path) {
				// What render --output-dir wrote is output, even inside an
				// input directory: read again, every object would be twice.
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		rel, _ := filepath.Rel(resolved, path)
		file, why := d.readable(path, e.Type())
		if why != "" {
			d.refused = append(d.refused, Diagnostic{Severity: Error, Source: Source{Path: filepath.Join(name, rel)}, Message: why})
			return nil
		}
		d.files = append(d.files, dirFile{at: rel, open: file})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(d.files, func(i, j int) bool { return d.files[i].at < d.files[j].at })
	return d, nil
}

// readable says which file to read for the entry at path, relative to the
// directory, or why none is read.
func (d *directory) readable(path string, mode fs.FileMode) (string, string) {
	rel, _ := filepath.Rel(d.resolved, path)
	if mode.IsRegular() {
		return rel, ""
	}
	if mode&fs.ModeSymlink == 0 {
		return "", fmt.Sprintf("%s: render reads only regular files from a directory it is given (a pipe or a device may be given as an argument of its own)", fileKind(mode))
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err
		}
		return "", "a symbolic link that leads nowhere: " + err.Error()
	}
	inside, err := filepath.Rel(d.resolved, target)
	if err != nil || !filepath.IsLocal(inside) {
		return "", fmt.Sprintf("a symbolic link to %s, outside %s: render reads a directory's files only from inside it, as kustomize reads only files inside its root; copy the file into the directory, or give it as an argument of its own",
			target, d.name)
	}
	info, err := os.Lstat(target)
	if err != nil {
		return "", err.Error()
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Sprintf("a symbolic link to %s, %s: render reads only regular files from a directory it is given", filepath.Join(d.name, inside), fileKind(info.Mode()))
	}
	return inside, ""
}

// fileKind names a kind of file that is not regular.
func fileKind(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a regular file"
}

// read reads one of the directory's files. It is opened through the
// directory, as an os.Root, so that a symbolic link put in place of one
// of its parts since the directory was listed cannot lead out of it; and
// without blocking, so that a named pipe put in its place is refused
// rather than waited on.
func (d *directory) read(root *os.Root, file dirFile) ([]byte, *Diagnostic, error) {
	name := filepath.Join(d.name, file.at)
	f, err := root.OpenFile(file.open, os.O_RDONLY|nonBlocking, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if !info.Mode().IsRegular() {
		return nil, &Diagnostic{Severity: Error, Source: Source{Path: name},
			Message: fileKind(info.Mode()) + ": render reads only regular files from a directory it is given"}, nil
	}
	return readOpened(name, f)
}
