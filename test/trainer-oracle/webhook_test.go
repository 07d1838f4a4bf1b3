package oracle

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	trainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	"github.com/kubeflow/trainer/v2/pkg/runtime/core"
	testingutil "github.com/kubeflow/trainer/v2/pkg/util/testing"
	"github.com/kubeflow/trainer/v2/pkg/webhooks"
)

// TestTrainerRefusesWhatTrainfnRefuses holds trainfn's refusals of Trainer's
// webhook rules to Trainer's own: each error-webhook case of trainfn's
// TrainJob render says, in its "# Trainer: " lines, what Trainer v2.3.0
// answers when the manifest is applied. Trainer's runtime webhook
// (ValidateCreate) and the TrainJob webhook's validation (the runtime's
// ValidateObjects, which the webhook calls) must refuse it in those words,
// and trainfn must refuse to render it. A case with no such line is one
// Trainer v2.3.0 lets through although its code means to refuse it.
func TestTrainerRefusesWhatTrainfnRefuses(t *testing.T) {
	files, err := filepath.Glob("../../render/trainjob/testdata/v1alpha1/error-webhook-*/input.yaml")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, file := range files {
		t.Run(filepath.Base(filepath.Dir(file)), func(t *testing.T) {
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
			wants := trainerSays(string(data))
			if len(wants) == 0 {
				t.Skip("Trainer v2.3.0 admits the case")
			}
			checked++
			job, rt := read(t, file)
			refusal := trainerRefusal(t, job, rt)
			for _, want := range wants {
				if !strings.Contains(refusal, want) {
					t.Errorf("Trainer does not say %q; it says:\n%s", want, refusal)
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

// trainerRefusal is what Trainer's webhooks answer the runtime's creation,
// then the TrainJob's: "" when they admit both.
func trainerRefusal(t *testing.T, job *trainer.TrainJob, rt *trainer.ClusterTrainingRuntime) string {
	ctx := context.Background()
	var out []string
	if _, err := (&webhooks.ClusterTrainingRuntimeValidator{}).ValidateCreate(ctx, rt); err != nil {
		out = append(out, err.Error())
	}
	b := testingutil.NewClientBuilder().WithObjects(rt)
	c := b.Build()
	if _, err := core.NewTrainingRuntime(ctx, c, testingutil.AsIndex(b), nil); err != nil {
		t.Fatal(err)
	}
	crt, err := core.NewClusterTrainingRuntime(ctx, c, testingutil.AsIndex(b), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, errs := crt.ValidateObjects(ctx, nil, job.DeepCopy()); len(errs) > 0 {
		out = append(out, errs.ToAggregate().Error())
	}
	return strings.Join(out, "\n")
}
