package oracle

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// TestTrainerRefusesWhatTrainfnRefuses holds trainfn's refusals of Trainer's
// webhook rules to Trainer's own: each error-webhook case of trainfn's
// TrainJob render says, in its "# Trainer: " lines, what Trainer v2.3.0
// answers when the manifest is applied. The case's runtime, then its
// TrainJob, are created on a real kube-apiserver that serves Trainer's
// CRDs and calls Trainer's webhooks through Trainer's own webhook
// configurations; the API server's answers must be the webhooks' refusals
// in those words, and trainfn must refuse to render the case. A case with
// no such line is one Trainer v2.3.0 lets through although its code means
// to refuse it: the API server must then admit both.
//
// Trainer's webhooks run in this process, in a manager set up as Trainer's
// own cmd and test/integration set it up, not as Trainer's released image:
// there is no image registry nor container runtime here to run it from.
// The API server still calls them over HTTPS, through the clientConfig of
// Trainer's webhook configurations, as in a cluster.
func TestTrainerRefusesWhatTrainfnRefuses(t *testing.T) {
	files, err := filepath.Glob("../../render/trainjob/testdata/v1alpha1/error-webhook-*/input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	server := startTrainer(t)
	checked := 0
	for _, file := range files {
		name := filepath.Base(filepath.Dir(file))
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			cmd := exec.Command(trainfn, "render", file)
			cmd.Stderr = &stderr
			if err := cmd.Run(); err == nil {
				t.Errorf("trainfn renders %s", file)
			}
			refusals := server.apply(t, name, data)
			wants := trainerSays(string(data))
			if len(wants) == 0 {
				if len(refusals) > 0 {
					t.Errorf("the case says Trainer admits it; the API server answers:\n%s", strings.Join(refusals, "\n"))
				}
				return
			}
			checked++
			for _, refusal := range refusals {
				if !strings.Contains(refusal, "admission webhook \"") || !strings.Contains(refusal, "\" denied the request: ") {
					t.Errorf("the API server refuses the case, not Trainer's webhooks:\n%s", refusal)
				}
			}
			refusal := strings.Join(refusals, "\n")
			for _, want := range wants {
				if !strings.Contains(refusal, want) {
					t.Errorf("Trainer does not say %q; the API server answers:\n%s", want, refusal)
				}
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("trainfn does not say %q; it says:\n%s", want, stderr.String())
				}
			}
		})
	}
	if checked < 8 {
		t.Errorf("only %d cases checked against Trainer", checked)
	}
}

// trainerSays are the messages a case's "# Trainer: " lines expect.
func trainerSays(input string) []string {
	var out []string
	for line := range strings.SplitSeq(input, "\n") {
		if m, ok := strings.CutPrefix(line, "# Trainer: "); ok {
			out = append(out, m)
		}
	}
	return out
}

// apply creates a case's runtimes, then its TrainJob, as a user applying
// the file would, in a namespace of the case's name; it returns the API
// server's refusals. A cluster-scoped runtime is deleted when the case
// ends, since other cases create their own of the same name.
func (s *trainerServer) apply(t *testing.T, ns string, input []byte) []string {
	ctx := context.Background()
	if err := s.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	runtimes, jobs := documents(t, input)
	var refusals []string
	for _, obj := range append(runtimes, jobs...) {
		if obj.GetKind() != "ClusterTrainingRuntime" && obj.GetNamespace() == "" {
			obj.SetNamespace(ns)
		}
		if err := s.client.Create(ctx, obj, client.FieldValidation("Strict")); err != nil {
			refusals = append(refusals, err.Error())
			continue
		}
		if obj.GetKind() == "TrainJob" {
			continue
		}
		t.Cleanup(func() {
			if err := s.client.Delete(context.Background(), obj); err != nil {
				t.Errorf("deleting %s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
		})
		s.waitCached(t, obj)
	}
	return refusals
}

// documents are a case's runtimes and TrainJobs, as written.
func documents(t *testing.T, input []byte) (runtimes, jobs []*unstructured.Unstructured) {
	for doc := range strings.SplitSeq(string(input), "\n---\n") {
		data, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if string(data) == "null" {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(data); err != nil {
			t.Fatal(err)
		}
		switch obj.GetKind() {
		case "TrainJob":
			jobs = append(jobs, obj)
		case "ClusterTrainingRuntime", "TrainingRuntime":
			runtimes = append(runtimes, obj)
		default:
			t.Fatalf("the case holds a %s", obj.GetKind())
		}
	}
	if len(runtimes) == 0 || len(jobs) == 0 {
		t.Fatal("the case holds no TrainJob and runtime")
	}
	return runtimes, jobs
}
