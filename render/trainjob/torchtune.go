package trainjob

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// torchTuneEntrypoint is the trainer command Trainer completes for
// torchtune, instead of setting the master's address.
var torchTuneEntrypoint = []string{"tune", "run"}

// torchTuneImmutable are the runtime's command items a torchtune job keeps.
var torchTuneImmutable = []string{"output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file"}

// torchTuneArgs complete `tune run` as Trainer v2.3.0 does: a rendezvous
// endpoint when more than one process trains, the recipe and its config
// (named after the runtime: torchtune-llama3.2-1b runs llama3_2/1B_*),
// then the runtime's paths.
func (j *Job) torchTuneArgs(nodes int32, procs string, gpus int, runtime *corev1.Container) []string {
	var out []string
	n, numeric := strconv.Atoi(procs)
	if nodes > 1 || numeric == nil && n > 1 || numeric != nil && gpus > 1 {
		out = append(out, fmt.Sprintf("%s=%s:%d", torchTuneRdzvFlag, j.host(nodeName), trainerPort))
	}
	args := j.Spec.Trainer.Args
	recipe, suffix := "full_finetune_distributed", "_full"
	switch {
	case nodes == 1 && (numeric == nil && n == 1 || gpus == 1):
		switch {
		case qLoRA(args):
			recipe, suffix = "lora_finetune_single_device", "_qlora_single_device"
		case loRA(args):
			recipe, suffix = "lora_finetune_single_device", "_lora_single_device"
		default:
			recipe, suffix = "full_finetune_single_device", "_full_single_device"
		}
	case nodes == 1 && qLoRA(args):
		recipe, suffix = "lora_finetune_distributed", "_qlora"
	case nodes == 1 && loRA(args):
		recipe, suffix = "lora_finetune_distributed", "_lora"
	case nodes > 1:
		suffix = "_full_multinode"
	}
	out = append(out, recipe, torchTuneConfigArg, torchTuneModel(j.Spec.RuntimeRef.Name)+suffix)
	for _, item := range runtime.Command {
		if name, _, _ := strings.Cut(item, "="); slices.Contains(torchTuneImmutable, name) {
			out = append(out, item)
		}
	}
	return out
}

// torchTuneModel is the model a torchtune runtime's name gives:
// torchtune-llama3.2-1b is llama3_2/1B; "" for a name of another form.
func torchTuneModel(runtime string) string {
	fields := strings.Split(runtime, "-")
	if len(fields) != 3 {
		return ""
	}
	return strings.ReplaceAll(fields[1], ".", "_") + "/" + strings.ToUpper(fields[2])
}

func loRA(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "model.lora_attn_modules") })
}

func qLoRA(args []string) bool {
	return !boolArg(args, "model.use_dora") && boolArg(args, "model.quantize_base")
}

func boolArg(args []string, item string) bool {
	return slices.ContainsFunc(args, func(a string) bool {
		name, v, found := strings.Cut(a, "=")
		return found && strings.Contains(name, item) && strings.EqualFold(strings.TrimSpace(v), "true")
	})
}
