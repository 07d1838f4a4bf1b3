package pytorchjob

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/supervise"
	"github.com/trainfn/trainfn/render/ynode"
)

// runDir is a worker's own scratch directory, an emptyDir, which outlives
// the restarts of its container: agentOnce records there that its
// command succeeded.
const (
	runDir    = "/run/trainfn"
	runVolume = "trainfn-run"
)

// agentName is $0 of agentOnce, which ps and the kubelet's logs show.
const agentName = "trainfn-agent"

// agentOnce runs a StatefulSet worker's command, torchrun's agent, until
// it succeeds once in its pod, and then no more. A StatefulSet restarts a
// container that exits, even with status 0, and an elastic job's agents
// succeed only together, when training is over: only trainfn's reconciler
// then scales the workers to zero. Without it, every restart trained the
// job again, forever, and said nothing. The command's own exit is kept,
// so that the reconciler and trainfn status still read the job's end in
// the container's last state; the restart after it says why it runs
// nothing, and waits to be stopped.
const agentOnce = `# Rendered by trainfn: an elastic job's agents succeed together when
# training is over, and a StatefulSet restarts what exits: after a success
# the command runs no more in this pod, and the worker waits to be stopped.
set -f
ended={{run}}/ended
if [ -e "$ended" ]; then
  echo "trainfn: training ended: this worker's command ($1) exited with status 0 before its StatefulSet restarted it; it runs nothing more and waits to be stopped, as trainfn's reconciler does once the agents have left (without it: kubectl scale statefulset {{workers}} --replicas=0)" >&2
  # The sleep goes with the script: nothing of this container outlives it.
  trap 'kill "$idle" 2>/dev/null; exit 0' TERM INT
  sleep 365d &
  idle=$!
  wait
  exit 0
fi
{{supervise}}supervise "$@"
# In a subshell: a redirection that fails would end the shell itself on the
# special built-in, and lose the command's code.
if [ "$code" -eq 0 ] && [ -z "$stopped" ] && ! (: > "$ended") 2>/dev/null; then
  echo "trainfn: cannot write $ended: a restart of this worker will train again" >&2
fi
exit "$code"
`

// agentScript is agentOnce for the workers' StatefulSet of that name.
func agentScript(workers string) string {
	return strings.NewReplacer("{{run}}", runDir, "{{workers}}", workers, "{{supervise}}", supervise.Function).Replace(agentOnce)
}

// runAgentOnce runs the pytorch container's command through agentOnce,
// with the scratch volume it records a success in. A container that
// names no command, only its image's entrypoint, cannot be run through
// it: its agents train again at every restart until the reconciler stops
// them, and a warning says so.
func runAgentOnce(t *pod.Template, main *pod.Container, workers string) ([]result.Warning, *field.Error) {
	cmd := main.Get("command")
	if cmd == nil || cmd.Kind != yaml.SequenceNode || len(cmd.Content) == 0 {
		return []result.Warning{{Field: main.Path().Child("command"),
			Message: "the container has no command, only its image's entrypoint, which trainfn cannot run its steps around: " +
				"the workers' StatefulSet restarts an agent that succeeded, which trains again, until trainfn's reconciler stops the workers; " +
				"name the command (torchrun ...) to have the agents run once"}}, nil
	}
	args := ynode.Seq()
	for _, name := range []string{"command", "args"} {
		if n := main.Get(name); n != nil && n.Kind == yaml.SequenceNode {
			args.Content = append(args.Content, n.Content...)
		}
	}
	main.Set("command", ynode.Of([]string{"/bin/sh", "-c", agentScript(workers), agentName}))
	main.Set("args", args)
	if err := t.AddVolume(ynode.Map("name", runVolume, "emptyDir", ynode.Map("medium", "Memory", "sizeLimit", "1Mi"))); err != nil {
		return nil, err
	}
	return nil, main.AddVolumeMount(runVolume, runDir)
}
