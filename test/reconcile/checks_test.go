//go:build e2e

package reconcile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/trainfn/trainfn/render/handoff"
)

// launcher stands for the launcher among the hosts a test expects.
const launcher = -1

// waitDiscovery waits until the job's discovery script names exactly the
// given hosts, in that order (workers by index, launcher for the
// launcher), and that this is also what the cluster says it must be: the
// workers that run, are ready, are not being deleted and are below the
// StatefulSet's count, in index order, after the launcher when it works.
// The launcher's pod must carry the digest of that script.
func (j *job) waitDiscovery(t *testing.T, want ...int) {
	t.Helper()
	eventually(t, fmt.Sprintf("discovery of hosts %v", want), func(ctx context.Context) error {
		return j.checkDiscovery(ctx, want)
	})
}

func (j *job) checkDiscovery(ctx context.Context, want []int) error {
	cm, err := kube.Client.CoreV1().ConfigMaps(j.ns).Get(ctx, j.name+"-config", metav1.GetOptions{})
	if err != nil {
		return err
	}
	s, err := j.statefulSet(ctx)
	if err != nil {
		return err
	}
	workers, err := j.pods(ctx, handoff.RoleWorker)
	if err != nil {
		return err
	}
	launchers, err := j.pods(ctx, handoff.RoleLauncher)
	if err != nil {
		return err
	}
	got, ok := cm.Data["discover_hosts.sh"]
	expected := j.script(want)
	fromCluster := j.script(works(s, workers, launchers))
	switch {
	case s.Annotations[handoff.DiscoverFormatAnnotation] != string(handoff.HostOnly):
		return fmt.Errorf("the StatefulSet asks for discovery in the format %q, not mpi-operator v2's %q", s.Annotations[handoff.DiscoverFormatAnnotation], handoff.HostOnly)
	case !ok:
		return fmt.Errorf("no discover_hosts.sh in %s; pods: %s", cm.Name, describe(workers))
	case got != expected:
		return fmt.Errorf("discover_hosts.sh is\n%s\nwant\n%s\npods: %s", got, expected, describe(workers))
	case fromCluster != expected:
		return fmt.Errorf("the cluster is not there yet: it makes the script\n%s\npods: %s", fromCluster, describe(workers))
	}
	digest := sha256.Sum256([]byte(got))
	mark := hex.EncodeToString(digest[:8])
	for _, p := range launchers {
		if running(&p) && p.Annotations[handoff.DiscoveredHosts] != mark {
			return fmt.Errorf("launcher pod %s is marked %q, not %q, the digest of the script", p.Name, p.Annotations[handoff.DiscoveredHosts], mark)
		}
	}
	return nil
}

// works are the hosts that can take work by the cluster's state, written
// independently of the reconciler's code: launcher first when it works,
// then the workers in index order.
func works(s *appsv1.StatefulSet, workers, launchers []corev1.Pod) []int {
	var hosts []int
	if s.Annotations[handoff.LauncherSlots] != "" {
		for _, p := range launchers {
			if running(&p) && ready(&p) {
				hosts = append(hosts, launcher)
			}
		}
	}
	var indexes []int
	for _, p := range workers {
		i, err := strconv.Atoi(p.Labels[appsv1.PodIndexLabel])
		if err == nil && running(&p) && ready(&p) && s.Spec.Replicas != nil && i < int(*s.Spec.Replicas) {
			indexes = append(indexes, i)
		}
	}
	slices.Sort(indexes)
	return append(hosts, indexes...)
}

// script is the discovery script of hosts, as Horovod reads it: the jobs
// here are mpi-operator's v2beta1 MPIJobs (mpiJobTemplate), whose script
// prints each host alone, as mpi-operator v2's does.
func (j *job) script(hosts []int) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	for _, h := range hosts {
		name := j.worker(h)
		if h == launcher {
			name = j.name + "-launcher"
		}
		fmt.Fprintf(&b, "echo %s.%s\n", name, j.name)
	}
	return b.String()
}

func running(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// describe sums pods up for a failure message.
func describe(pods []corev1.Pod) string {
	var out []string
	for _, p := range pods {
		state := string(p.Status.Phase)
		if ready(&p) {
			state += ",ready"
		}
		if p.DeletionTimestamp != nil {
			state += ",deleting"
		}
		out = append(out, fmt.Sprintf("%s(%s)", p.Name, state))
	}
	slices.Sort(out)
	return "[" + strings.Join(out, " ") + "]"
}

// checkInvariants checks what must hold after any scenario: the worker
// pods the test kept were never deleted, the user's Secrets are as they
// were, and the reconciler owns no field the rendered output sets, nor one
// GitOps applied.
func (j *job) checkInvariants(t *testing.T) {
	t.Helper()
	ctx, cancel := timeout()
	defer cancel()
	for name, uid := range j.kept {
		p, err := kube.Client.CoreV1().Pods(j.ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			t.Errorf("pod %s was deleted", name)
		case err != nil:
			t.Errorf("reading pod %s: %v", name, err)
		case p.UID != uid:
			t.Errorf("pod %s was deleted and made again (UID %s, was %s)", name, p.UID, uid)
		case p.DeletionTimestamp != nil:
			t.Errorf("pod %s is being deleted", name)
		}
	}
	for _, want := range j.secrets {
		got, err := kube.Client.CoreV1().Secrets(j.ns).Get(ctx, want.Name, metav1.GetOptions{})
		switch {
		case err != nil:
			t.Errorf("reading the user's Secret %s: %v", want.Name, err)
		case got.ResourceVersion != want.ResourceVersion || !maps.EqualFunc(got.Data, want.Data, slices.Equal):
			t.Errorf("the user's Secret %s was changed: resourceVersion %s, was %s; managed by %v",
				want.Name, got.ResourceVersion, want.ResourceVersion, managers(got.ManagedFields))
		}
	}
	for _, rendered := range j.objs {
		obj, err := live(ctx, j.ns, rendered)
		if err != nil {
			t.Errorf("reading %s %s: %v", rendered.GetKind(), rendered.GetName(), err)
			continue
		}
		checkOwnership(t, rendered, obj)
	}
}

// checkOwnership checks, by managedFields, that each field the reconciler
// wrote on an object is one its rendered output leaves out, and that no
// applier manages it too: GitOps and the reconciler never fight over one.
func checkOwnership(t *testing.T, rendered, obj *unstructured.Unstructured) {
	t.Helper()
	ours, applied := map[string]bool{}, map[string]string{}
	for _, m := range obj.GetManagedFields() {
		if m.FieldsV1 == nil {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(m.FieldsV1.GetRawBytes(), &fields); err != nil {
			t.Fatalf("%s %s: managedFields of %s: %v", obj.GetKind(), obj.GetName(), m.Manager, err)
		}
		for _, path := range leaves(nil, fields) {
			key := strings.Join(path, ".")
			switch {
			case m.Manager == handoff.FieldManager:
				ours[key] = true
				if _, found, _ := unstructured.NestedFieldNoCopy(rendered.Object, path...); found {
					t.Errorf("%s %s: the reconciler wrote %s, which the rendered output sets", obj.GetKind(), obj.GetName(), key)
				}
			case m.Operation == metav1.ManagedFieldsOperationApply:
				applied[key] = m.Manager
			}
		}
	}
	for key := range ours {
		if manager, ok := applied[key]; ok {
			t.Errorf("%s %s: %s is managed by both the reconciler and %s", obj.GetKind(), obj.GetName(), key, manager)
		}
	}
}

// leaves are the fields a managedFields entry names, as paths of field
// names. Entries of lists ("k:", "v:", "i:") end a path: the reconciler
// writes none, and a path through one only needs comparing whole.
func leaves(prefix []string, fields map[string]any) [][]string {
	var out [][]string
	for k, v := range fields {
		if k == "." {
			continue
		}
		name, isField := strings.CutPrefix(k, "f:")
		path := append(slices.Clone(prefix), name)
		sub, _ := v.(map[string]any)
		if !isField {
			path[len(path)-1] = k
			out = append(out, path)
			continue
		}
		if len(sub) == 0 || (len(sub) == 1 && sub["."] != nil) {
			out = append(out, path)
			continue
		}
		out = append(out, leaves(path, sub)...)
	}
	return out
}

func managers(fields []metav1.ManagedFieldsEntry) []string {
	var out []string
	for _, m := range fields {
		out = append(out, m.Manager+"/"+string(m.Operation))
	}
	return out
}
