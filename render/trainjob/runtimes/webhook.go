package runtimes

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ancestorContainers are the containers Trainer's runtime webhook requires
// of a replicated job by its trainjob-ancestor-step label: the ones the
// TrainJob's trainer and initializers are set on.
var ancestorContainers = map[string]string{
	"trainer":             "node",
	"dataset-initializer": "dataset-initializer",
	"model-initializer":   "model-initializer",
}

// webhookValidationLabel lets a runtime skip Trainer's runtime webhook
// (its objectSelector, new in Trainer v2.3.0).
const webhookValidationLabel = "trainer.kubeflow.org/webhook-validation"

// WebhookErrors are the rules Trainer v2.3.0's runtime webhooks enforce in
// Go (pkg/webhooks/trainingruntime_webhook.go:66-105), in their words:
// a replicated job a TrainJob's trainer or initializer runs in is one Job
// with the container the TrainJob's settings go to. Trainer refuses such a
// runtime when it is applied; here it is refused where it is written.
func (rt *Runtime) WebhookErrors() field.ErrorList {
	if rt.Labels[webhookValidationLabel] == "disabled" {
		return nil
	}
	at := field.NewPath("spec", "template", "spec", "replicatedJobs")
	var errs field.ErrorList
	for i, r := range rt.Spec.Template.Spec.ReplicatedJobs {
		step := r.Template.Labels["trainer.kubeflow.org/trainjob-ancestor-step"]
		want, ok := ancestorContainers[step]
		if !ok {
			continue
		}
		if r.Replicas != 1 {
			errs = append(errs, field.Invalid(at.Index(i).Child("replicas"), r.Replicas, "always must be 1"))
		}
		containers := r.Template.Spec.Template.Spec.Containers
		if !slices.ContainsFunc(containers, func(c corev1.Container) bool { return c.Name == want }) {
			names := make([]string, len(containers))
			for k, c := range containers {
				names[k] = c.Name
			}
			errs = append(errs, field.Invalid(at.Index(i).Child("template", "spec", "template", "spec", "containers"), names,
				fmt.Sprintf("must contain the required container for the ancestor: %s", step)))
		}
	}
	return errs
}
