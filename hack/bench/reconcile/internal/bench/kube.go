package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/trainfn/trainfn/test/cluster"
)

// fieldManager is who the benchmark applies as, standing in for GitOps.
const fieldManager = "trainfn-bench"

// kube is the control plane and what the benchmark does to it.
type kube struct {
	*cluster.Cluster
	dyn    dynamic.Interface
	mapper meta.RESTMapper
	// trainfn is the binary that renders the jobs.
	trainfn string
	dir     string
}

func newKube(c *cluster.Cluster, trainfn, dir string) (*kube, error) {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Client.Discovery()))
	return &kube{Cluster: c, dyn: dyn, mapper: mapper, trainfn: trainfn, dir: dir}, nil
}

// poll checks until check succeeds, and says what it waited for otherwise.
func poll(ctx context.Context, what string, timeout time.Duration, check func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		last = check(ctx)
		return last == nil, nil
	})
	if err != nil {
		return errors.Join(fmt.Errorf("%s: not after %s", what, timeout), last)
	}
	return nil
}

// namespace creates a namespace and returns once it can take pods: the
// API server refuses pods until its default service account exists.
func (k *kube) namespace(ctx context.Context, name string) error {
	_, err := k.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	return poll(ctx, "the default service account of "+name, time.Minute, func(ctx context.Context) error {
		_, err := k.Client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

// mpiJob is an elastic MPIJob of n workers, between 1 and n, whose pods
// request nothing, so that only the fake nodes' pod count limits them.
func mpiJob(name string, workers int) string {
	return fmt.Sprintf(`apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: %[1]s
  annotations:
    trainfn.dev/elastic-workers: "1:%[2]d"
spec:
  slotsPerWorker: 1
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: registry.example/horovod:1
            command: [horovodrun, --host-discovery-script, /etc/mpi/discover_hosts.sh, python, train.py]
    Worker:
      replicas: %[2]d
      template:
        spec:
          containers:
          - name: worker
            image: registry.example/horovod:1
`, name, workers)
}

// render renders an elastic MPIJob of n workers with trainfn itself.
func (k *kube) render(ctx context.Context, name string, workers int) ([]*unstructured.Unstructured, error) {
	in := filepath.Join(k.dir, fmt.Sprintf("%s-%d.yaml", name, workers))
	if err := os.WriteFile(in, []byte(mpiJob(name, workers)), 0o644); err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, k.trainfn, "render", in)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("trainfn render: %w\n%s", err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("reading trainfn's output: %w", err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
	return objs, nil
}

// apply applies objects into a namespace with server-side apply, as Flux
// does and Argo CD with ServerSideApply=true.
func (k *kube) apply(ctx context.Context, ns string, objs []*unstructured.Unstructured) error {
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		mapping, err := k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		obj = obj.DeepCopy()
		var client dynamic.ResourceInterface = k.dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			obj.SetNamespace(ns)
			client = k.dyn.Resource(mapping.Resource).Namespace(ns)
		}
		data, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		_, err = client.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: fieldManager})
		if err != nil {
			return fmt.Errorf("applying %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
	}
	return nil
}

// setReady plays the kubelet of a worker whose readiness changes: kwok
// made the pod ready once and leaves it alone after. It returns when the
// API server answered, the instant a change is measured from.
func (k *kube) setReady(ctx context.Context, ns, pod string, ready bool) (time.Time, error) {
	status := "False"
	if ready {
		status = "True"
	}
	now := time.Now().UTC().Format(time.RFC3339)
	patch := fmt.Appendf(nil, `{"status":{"conditions":[`+
		`{"type":"Ready","status":%[1]q,"lastTransitionTime":%[2]q},`+
		`{"type":"ContainersReady","status":%[1]q,"lastTransitionTime":%[2]q}]}}`, status, now)
	_, err := k.Client.CoreV1().Pods(ns).Patch(ctx, pod, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	return time.Now(), err
}

// setReadyAll changes many workers at once, as a node failing or a rack
// coming back does, and returns when the last answer came.
func (k *kube) setReadyAll(ctx context.Context, ns string, pods []string, ready bool) (time.Time, error) {
	var mu sync.Mutex
	var last time.Time
	var errs []error
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, pod := range pods {
		wg.Go(func() {
			<-start
			at, err := k.setReady(ctx, ns, pod, ready)
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
			if at.After(last) {
				last = at
			}
		})
	}
	close(start)
	wg.Wait()
	return last, errors.Join(errs...)
}

// parallel runs do(i) for i in [0, n) on workers goroutines, retrying each
// a few times: at thousands of requests a second, the API server sheds
// some with 429 or times them out.
func parallel(ctx context.Context, n, workers int, do func(context.Context, int) error) error {
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				var err error
				for try := range 5 {
					if err = do(ctx, i); err == nil || ctx.Err() != nil {
						break
					}
					time.Sleep(time.Duration(try+1) * 200 * time.Millisecond)
				}
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		select {
		case next <- i:
		case err := <-errs:
			close(next)
			wg.Wait()
			return err
		case <-ctx.Done():
			close(next)
			wg.Wait()
			return ctx.Err()
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// deleteNamespace deletes a namespace and returns once it is gone: until
// then a reconciler started later would still find, and handle, the job in
// it.
func (k *kube) deleteNamespace(ctx context.Context, ns string) error {
	err := k.Client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return poll(ctx, "namespace "+ns+" gone", 3*time.Minute, func(ctx context.Context) error {
		_, err := k.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err == nil {
			err = errors.New("still there")
		}
		return err
	})
}
