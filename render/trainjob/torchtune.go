package trainjob

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
	recipe, suffix := torchTuneRecipe(nodes, procs, gpus, j.Spec.Trainer.Args)
	out = append(out, recipe, torchTuneConfigArg, torchTuneModel(j.Spec.RuntimeRef.Name)+suffix)
	for _, item := range runtime.Command {
		if name, _, _ := strings.Cut(item, "="); slices.Contains(torchTuneImmutable, name) {
			out = append(out, item)
		}
	}
	return out
}

// torchTuneRecipe is the recipe and the suffix of its config that
// Trainer's getRecipeAndConfig chooses for the nodes, processes per node
// ("auto" or a number), GPUs per node and trainer args.
func torchTuneRecipe(nodes int32, procs string, gpus int, args []string) (recipe, suffix string) {
	n, numeric := strconv.Atoi(procs)
	recipe, suffix = "full_finetune_distributed", "_full"
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
	return recipe, suffix
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

// torchTuneModels are the models Trainer v2.3.0's torchtune recipes
// support (pkg/constants/constants.go:312).
var torchTuneModels = []string{"llama3_2/1B", "llama3_2/3B", "llama3_3/70B", "qwen2_5/1.5B"}

// torchTuneErrors are Trainer v2.3.0's torchtune rules, in its words
// (pkg/runtime/framework/plugins/torch/torchtune.go:35-104): a model its
// recipes support, one node but for the 70B model, QLoRA where the model
// takes it, no LoRA over nodes, and none of the paths the runtime sets
// among the args. The config is chosen as Trainer's webhook chooses it:
// numProcPerNode auto unless the TrainJob sets it.
func (j *Job) torchTuneErrors(p *plan) field.ErrorList {
	t := j.Spec.Trainer
	if p.mlPolicy.Torch == nil || t == nil || !slices.Equal(t.Command, torchTuneEntrypoint) {
		return nil
	}
	var errs field.ErrorList
	at := field.NewPath("spec")
	name := j.Spec.RuntimeRef.Name
	model := torchTuneModel(name)
	if !slices.Contains(torchTuneModels, model) {
		errs = append(errs, field.Invalid(at.Child("runtimeRef", "name"), name, fmt.Sprintf("must have a supported pretrained model, invalid model configured: %v", model)))
	}
	nodes := int32(1)
	if t.NumNodes != nil {
		nodes = *t.NumNodes
	}
	if nodes > 1 && model != "llama3_3/70B" {
		errs = append(errs, field.Invalid(at.Child("trainer", "numNodes"), nodes, fmt.Sprintf("must be 1 for %v model", model)))
	}
	procs := "auto"
	if t.NumProcPerNode != nil {
		procs = strconv.Itoa(int(*t.NumProcPerNode))
	}
	_, suffix := torchTuneRecipe(nodes, procs, gpus(j.resourcesPerNode(p)), t.Args)
	if strings.Contains(suffix, "_qlora") {
		if model == "qwen2_5/1.5B" {
			errs = append(errs, field.Invalid(at.Child("runtimeRef", "name"), name, fmt.Sprintf("QLoRA is not supported for %v model", model)))
		}
		if !strings.Contains(suffix, "_qlora_single_device") && (model == "llama3_2/1B" || model == "llama3_2/3B") {
			errs = append(errs,
				field.Invalid(at.Child("trainer", "numProcPerNode"), procs, fmt.Sprintf("must be auto or 1 for %v model when using QLoRA", model)),
				field.Invalid(at.Child("trainer", "resourcesPerNode"), t.ResourcesPerNode, fmt.Sprintf("must have gpu resource with value 1 for %v model when using QLoRA", model)))
		}
	}
	if nodes > 1 && (loRA(t.Args) || qLoRA(t.Args)) {
		errs = append(errs, field.Invalid(at.Child("trainer", "numNodes"), nodes, "LoRA fine-tuning is not supported for multi-node training in TorchTune"))
	}
	for i, arg := range t.Args {
		if key, _, _ := strings.Cut(arg, "="); slices.Contains(torchTuneImmutable, key) {
			errs = append(errs, field.Invalid(at.Child("trainer", "args").Index(i), arg,
				fmt.Sprintf("must not set immutable config %q in trainer args; it is managed by the runtime", key)))
		}
	}
	return errs
}
