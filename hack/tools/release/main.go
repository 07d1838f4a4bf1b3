// Command release packs what `make release` built into the files a release
// publishes, byte for byte the same from the same sources: every time is
// SOURCE_DATE_EPOCH's, every owner root, every list sorted.
//
//	release archive -epoch N -o NAME.tar.gz DIR
//	release image -epoch N -version V -name NAME -source URL -revision SHA \
//	    -o NAME_oci.tar linux/amd64=BINARY linux/arm64=BINARY
//	release inspect -tag V LAYOUT
//
// archive writes DIR's files, under a folder of DIR's name, as a gzip'd tar.
// image writes an OCI image layout, as a tar, holding one multi-arch index
// of an image per platform: the static binary alone, at /NAME, run as the
// non-root user 65532, on what distroless's static base gives it (an
// /etc/passwd and /etc/group naming root, nobody and nonroot, a /tmp), with
// the OCI annotations and labels of its version and source. inspect checks
// such a layout, and prints the platforms of the index it tags.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "archive":
		err = archiveCommand(os.Args[2:])
	case "image":
		err = imageCommand(os.Args[2:])
	case "inspect":
		err = inspectCommand(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: release archive|image|inspect [flags] ...")
	os.Exit(2)
}

func archiveCommand(args []string) error {
	fs := flag.NewFlagSet("archive", flag.ExitOnError)
	epoch := fs.Int64("epoch", 0, "SOURCE_DATE_EPOCH: the time of every entry")
	out := fs.String("o", "", "the .tar.gz to write")
	_ = fs.Parse(args)
	if *out == "" || fs.NArg() != 1 {
		return fmt.Errorf("archive: -o and one folder")
	}
	dir := fs.Arg(0)
	files, err := filesOf(dir, filepath.Base(dir), time.Unix(*epoch, 0), true)
	if err != nil {
		return err
	}
	var tarred bytes.Buffer
	if err := writeTar(&tarred, files); err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	// gzip's header keeps no name and a zero time unless told.
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := io.Copy(zw, &tarred); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// entry is a file of a tar, whole.
type entry struct {
	header tar.Header
	data   []byte
}

// filesOf are the entries of dir's tree under prefix, in lexical order,
// with the time given, owned by root, their modes 0755 for folders and,
// with executables, for files any may run, and 0644 for other files,
// whatever the umask made them.
func filesOf(dir, prefix string, at time.Time, executables bool) ([]entry, error) {
	var out []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := path.Join(prefix, filepath.ToSlash(rel))
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			out = append(out, entry{header: tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, ModTime: at}})
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			mode := int64(0o644)
			if executables && info.Mode()&0o111 != 0 {
				mode = 0o755
			}
			out = append(out, entry{header: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: at}, data: data})
		default:
			return fmt.Errorf("%s: neither a folder nor a regular file", p)
		}
		return nil
	})
	return out, err
}

// writeTar writes entries in their order, in the PAX format, which
// records no access or change times unless given, nor owners' names.
func writeTar(w io.Writer, entries []entry) error {
	tw := tar.NewWriter(w)
	for _, e := range entries {
		h := e.header
		h.Format = tar.FormatPAX
		if err := tw.WriteHeader(&h); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

func tarHeaderDir(name string, mode int64, owner int, at time.Time) tar.Header {
	return tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, Uid: owner, Gid: owner, ModTime: at}
}

func tarHeaderFile(name string, mode, size int64, at time.Time) tar.Header {
	return tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: size, ModTime: at}
}

// sortedEntries orders entries by name, so that a tar's bytes do not depend
// on the order they were gathered in.
func sortedEntries(entries []entry) []entry {
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.header.Name, b.header.Name) })
	return entries
}
