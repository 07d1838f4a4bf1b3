// Command nodeimage packs folders into container images without a registry
// or a container engine: each folder one layer, the images written to one
// archive that `ctr images import` reads, their shared layers stored once.
//
//	nodeimage -spec images.json -o images.tar
//
// The spec lists the images, each with its references, the folders of its
// layers (bottom first) and its configuration. A folder's files keep their
// owners and modes; device files and sockets are left out, as the runtime
// makes /dev itself.
package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Image is one image of the spec.
type Image struct {
	// Refs are the image's names, e.g. docker.io/mpioperator/mpi-pi:openmpi.
	Refs []string `json:"refs"`
	// Layers are folders, bottom first.
	Layers     []string `json:"layers"`
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
	Env        []string `json:"env,omitempty"`
	User       string   `json:"user,omitempty"`
	WorkingDir string   `json:"workingDir,omitempty"`
}

func main() {
	spec := flag.String("spec", "", "the images, as JSON: a list of {refs, layers, entrypoint, cmd, env, user, workingDir}")
	out := flag.String("o", "", "the archive to write")
	cache := flag.String("cache", "", "a folder for the layers' compressed tars (default: beside the archive)")
	flag.Parse()
	if *spec == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if *cache == "" {
		*cache = *out + ".layers"
	}
	if err := run(*spec, *out, *cache); err != nil {
		fmt.Fprintln(os.Stderr, "nodeimage:", err)
		os.Exit(1)
	}
}

func run(specPath, out, cache string) error {
	data, err := os.ReadFile(specPath)
	if err != nil {
		return err
	}
	var images []Image
	if err := json.Unmarshal(data, &images); err != nil {
		return fmt.Errorf("%s: %w", specPath, err)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	layers := map[string]v1.Layer{}
	refs := map[name.Reference]v1.Image{}
	for _, spec := range images {
		img := empty.Image
		for _, dir := range spec.Layers {
			layer, ok := layers[dir]
			if !ok {
				if layer, err = folderLayer(dir, filepath.Join(cache, fmt.Sprintf("%d.tar.gz", len(layers)))); err != nil {
					return err
				}
				layers[dir] = layer
			}
			if img, err = mutate.AppendLayers(img, layer); err != nil {
				return err
			}
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return err
		}
		cfg = cfg.DeepCopy()
		cfg.Architecture, cfg.OS = "amd64", "linux"
		cfg.Config.Entrypoint, cfg.Config.Cmd = spec.Entrypoint, spec.Cmd
		cfg.Config.Env, cfg.Config.User, cfg.Config.WorkingDir = spec.Env, spec.User, spec.WorkingDir
		if img, err = mutate.ConfigFile(img, cfg); err != nil {
			return err
		}
		for _, r := range spec.Refs {
			ref, err := name.ParseReference(r)
			if err != nil {
				return err
			}
			refs[ref] = img
		}
	}
	tmp := out + ".tmp"
	if err := tarball.MultiRefWriteToFile(tmp, refs); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// folderLayer writes a folder as a gzipped tar once, at path, and reads the
// layer from there: go-containerregistry reads a layer several times (its
// digest, its diff ID, the archive), and a file is cheaper to read again
// than a folder is to walk and compress again.
func folderLayer(dir, path string) (v1.Layer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	err = writeTar(zw, dir)
	err = errors.Join(err, zw.Close(), f.Close())
	if err != nil {
		return nil, fmt.Errorf("packing %s: %w", dir, err)
	}
	return tarball.LayerFromFile(path)
}

// epoch is every file's modification time, so that the same folder packs
// into the same layer.
var epoch = time.Unix(0, 0)

func writeTar(w io.Writer, dir string) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode()&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeSocket|fs.ModeNamedPipe) != 0 {
			return nil
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		if info.IsDir() {
			hdr.Name += "/"
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			hdr.Uid, hdr.Gid = int(st.Uid), int(st.Gid)
		}
		hdr.Uname, hdr.Gname = "", ""
		hdr.ModTime, hdr.AccessTime, hdr.ChangeTime = epoch, time.Time{}, time.Time{}
		hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	return errors.Join(err, tw.Close())
}
