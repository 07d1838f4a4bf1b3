package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/go-containerregistry/pkg/v1/validate"
)

// nonroot is the user the images run as: distroless's nonroot.
const nonroot = 65532

func imageCommand(args []string) error {
	fs := flag.NewFlagSet("image", flag.ExitOnError)
	epoch := fs.Int64("epoch", 0, "SOURCE_DATE_EPOCH: the image's creation time, and its files'")
	version := fs.String("version", "", "the release's version, the image's tag")
	name := fs.String("name", "", "the binary's name, the image's title: /NAME is its entrypoint")
	repository := fs.String("repository", "", "where the image is published, as ghcr.io/trainfn/trainfn")
	source := fs.String("source", "", "the source repository's URL")
	revision := fs.String("revision", "", "the source revision")
	out := fs.String("o", "", "the OCI image layout to write, as a tar")
	digest := fs.String("digest", "", "a file to write the index's digest to")
	_ = fs.Parse(args)
	if *version == "" || *name == "" || *repository == "" || *out == "" || fs.NArg() == 0 {
		return fmt.Errorf("image: -version, -name, -repository, -o and PLATFORM=BINARY arguments")
	}
	at := time.Unix(*epoch, 0).UTC()
	annotations := map[string]string{
		"org.opencontainers.image.title":    *name,
		"org.opencontainers.image.version":  *version,
		"org.opencontainers.image.created":  at.Format(time.RFC3339),
		"org.opencontainers.image.source":   *source,
		"org.opencontainers.image.revision": *revision,
		"org.opencontainers.image.url":      *source,
	}
	index := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arg := range fs.Args() {
		platform, binary, ok := strings.Cut(arg, "=")
		os, arch, ok2 := strings.Cut(platform, "/")
		if !ok || !ok2 {
			return fmt.Errorf("image: %q is not PLATFORM=BINARY, as linux/amd64=bin/trainfn", arg)
		}
		img, err := image(*name, binary, os, arch, at, annotations)
		if err != nil {
			return err
		}
		index = mutate.AppendManifests(index, mutate.IndexAddendum{Add: img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: os, Architecture: arch}}})
	}
	index = mutate.Annotations(index, annotations).(v1.ImageIndex)
	dir, err := os.MkdirTemp("", "release-oci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	ref := *repository + ":" + *version
	if err := p.AppendIndex(index, layout.WithAnnotations(map[string]string{
		// The tag, as skopeo and crane read a layout; the whole name, as
		// containerd's import reads it.
		"org.opencontainers.image.ref.name": *version,
		"io.containerd.image.name":          ref,
	})); err != nil {
		return err
	}
	files, err := filesOf(dir, ".", at, false)
	if err != nil {
		return err
	}
	var tarred bytes.Buffer
	if err := writeTar(&tarred, sortedEntries(files[1:])); err != nil { // not "./" itself
		return err
	}
	if err := os.WriteFile(*out, tarred.Bytes(), 0o644); err != nil {
		return err
	}
	if *digest != "" {
		d, err := index.Digest()
		if err != nil {
			return err
		}
		return os.WriteFile(*digest, []byte(ref+"@"+d.String()+"\n"), 0o644)
	}
	return nil
}

// image is one platform's image: binary at /name, on a layer of its own.
func image(name, binary, goos, arch string, at time.Time, annotations map[string]string) (v1.Image, error) {
	data, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	dir := func(name string, mode int64, owner int) entry {
		return entry{header: tarHeaderDir(name, mode, owner, at)}
	}
	file := func(name string, mode int64, content []byte) entry {
		return entry{header: tarHeaderFile(name, mode, int64(len(content)), at), data: content}
	}
	files := []entry{
		dir("etc/", 0o755, 0),
		file("etc/group", 0o644, []byte("root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n")),
		file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")),
		dir("home/", 0o755, 0),
		dir("home/nonroot/", 0o700, nonroot),
		dir("tmp/", 0o1777, 0),
		file(name, 0o755, data),
	}
	var tarred bytes.Buffer
	if err := writeTar(&tarred, sortedEntries(files)); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tarred.Bytes())), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
		History: v1.History{Created: v1.Time{Time: at}, CreatedBy: "trainfn release: /" + name}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = goos, arch
	cf.Created = v1.Time{Time: at}
	cf.Config.User = fmt.Sprintf("%d:%d", nonroot, nonroot)
	cf.Config.Entrypoint = []string{"/" + filepath.Base(name)}
	cf.Config.Labels = annotations
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, annotations).(v1.Image), nil
}

// inspectCommand prints the platforms of the index an OCI layout tags, in
// its order, once the index and every image in it are valid.
func inspectCommand(args []string) error {
	fs := flag.NewFlagSet("inspect", flag.ExitOnError)
	tag := fs.String("tag", "", "the index's org.opencontainers.image.ref.name")
	_ = fs.Parse(args)
	if *tag == "" || fs.NArg() != 1 {
		return fmt.Errorf("inspect: -tag and one layout folder")
	}
	root, err := layout.ImageIndexFromPath(fs.Arg(0))
	if err != nil {
		return err
	}
	manifest, err := root.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range manifest.Manifests {
		if d.Annotations["org.opencontainers.image.ref.name"] != *tag {
			continue
		}
		index, err := root.ImageIndex(d.Digest)
		if err != nil {
			return err
		}
		if err := validate.Index(index); err != nil {
			return err
		}
		m, err := index.IndexManifest()
		if err != nil {
			return err
		}
		var platforms []string
		for _, image := range m.Manifests {
			platforms = append(platforms, image.Platform.OS+"/"+image.Platform.Architecture)
		}
		fmt.Println(strings.Join(platforms, " "))
		return nil
	}
	return fmt.Errorf("inspect: no index tagged %s in %s", *tag, fs.Arg(0))
}
