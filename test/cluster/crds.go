package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

// ModuleDir is the folder of a Go module at a version ("volcano.sh/volcano@v1.10.0"),
// fetched through the Go module proxy as go mod download does, into the
// module cache. Projects publish their CRDs in their modules, so this is
// how a test gets a real CRD without another download. It runs outside any
// module, so that the repository's go.mod and go.sum stay as they are.
func ModuleDir(ctx context.Context, module string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("fetching %s: %w", module, err)
	}
	cmd := exec.CommandContext(ctx, goTool, "mod", "download", "-json", module)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOWORK=off", "GOFLAGS=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	// On failure too, go mod download -json says why in its Error field.
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &info); err != nil && runErr == nil {
		return "", fmt.Errorf("go mod download -json %s: %w", module, err)
	}
	if runErr != nil || info.Error != "" || info.Dir == "" {
		return "", fmt.Errorf("go mod download -json %s: %v %s %s", module, runErr, info.Error, bytes.TrimSpace(stderr.Bytes()))
	}
	return info.Dir, nil
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallCRDs applies the CustomResourceDefinitions in files, server-side,
// and returns once the API server serves each: Established, and listed by
// discovery, which is where clients look a kind up.
func (c *Cluster) InstallCRDs(ctx context.Context, files ...string) error {
	var crds []*unstructured.Unstructured
	for _, file := range files {
		objs, err := ReadObjects(file)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			if obj.GetKind() != "CustomResourceDefinition" {
				return fmt.Errorf("%s: %s %s is no CustomResourceDefinition", file, obj.GetKind(), obj.GetName())
			}
		}
		crds = append(crds, objs...)
	}
	return c.InstallCRDObjects(ctx, crds)
}

// InstallCRDObjects is InstallCRDs for CRDs already read, and edited.
func (c *Cluster) InstallCRDObjects(ctx context.Context, crds []*unstructured.Unstructured) error {
	client, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	for _, obj := range crds {
		data, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		_, err = client.Resource(crdResource).Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
			FieldManager: "trainfn-e2e",
		})
		if err != nil {
			return fmt.Errorf("applying CustomResourceDefinition %s: %w", obj.GetName(), err)
		}
	}
	for _, crd := range crds {
		err := c.Wait(ctx, "CustomResourceDefinition "+crd.GetName(), time.Minute, func(ctx context.Context) error {
			return served(ctx, c, client, crd)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// served reports why the API server does not serve a CRD's kind yet.
func served(ctx context.Context, c *Cluster, client dynamic.Interface, crd *unstructured.Unstructured) error {
	current, err := client.Resource(crdResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
	if err != nil {
		return err
	}
	conditions, _, _ := unstructured.NestedSlice(current.Object, "status", "conditions")
	established := false
	for _, cond := range conditions {
		cond, _ := cond.(map[string]any)
		if cond["type"] == "Established" && cond["status"] == "True" {
			established = true
		}
		if cond["type"] == "NamesAccepted" && cond["status"] == "False" {
			return fmt.Errorf("names not accepted: %v", cond["message"])
		}
	}
	if !established {
		return errors.New("not Established yet")
	}
	group, _, _ := unstructured.NestedString(current.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(current.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(current.Object, "spec", "versions")
	for _, v := range versions {
		v, _ := v.(map[string]any)
		name, _ := v["name"].(string)
		if servedVersion, _ := v["served"].(bool); !servedVersion {
			continue
		}
		resources, err := c.Client.Discovery().ServerResourcesForGroupVersion(group + "/" + name)
		if err != nil {
			return fmt.Errorf("discovery of %s/%s: %w", group, name, err)
		}
		if !slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == plural }) {
			return fmt.Errorf("discovery does not list %s in %s/%s yet", plural, group, name)
		}
	}
	return nil
}

// ReadObjects decodes a YAML stream of Kubernetes objects, skipping empty
// documents.
func ReadObjects(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := DecodeObjects(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return objs, nil
}

// DecodeObjects decodes a YAML stream of Kubernetes objects, skipping
// empty documents.
func DecodeObjects(data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		if obj != nil {
			objs = append(objs, &unstructured.Unstructured{Object: obj})
		}
	}
}
