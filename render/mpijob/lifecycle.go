package mpijob

import (
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/ynode"
)

// runVolume is a pod's scratch directory, mpi.RunDir: the workers' and
// the launcher's whose command runs through mpi.Launch.
const runVolume = "trainfn-run"

// workersEnd tells whether the workers stop by themselves when the job
// ends: a static job's Indexed Job of workers whose command trainfn runs,
// told by a launcher whose command it runs too, under a cleanPodPolicy
// that stops them. An elastic job's StatefulSet restarts whatever exits;
// its reconciler stops it. An elastic job's Indexed Job (under Kueue) is
// told, as a static job's is.
func (j *Job) workersEnd() bool {
	if j.Worker == nil || j.workersInStatefulSet() || !j.workersWrapped() || !hasCommand(j.main(pod.NewTemplate(j.Launcher.Template, j.Launcher.Path))) {
		return false
	}
	return j.RunPolicy.CleanPodPolicy == "Running" || j.RunPolicy.CleanPodPolicy == "All"
}

// workersWrapped tells whether the workers' command runs through
// mpi.Work: when their container names its command, or names nothing and
// runs the launch mode's server.
func (j *Job) workersWrapped() bool {
	main := j.main(pod.NewTemplate(j.Worker.Template, j.Worker.Path))
	return !j.workersInStatefulSet() && (hasCommand(main) || main.Get("command") == nil && main.Get("args") == nil)
}

// hasCommand tells whether a container names its command: only then can
// trainfn run its own steps around it, the image's entrypoint being
// unknown at render time.
func hasCommand(c *pod.Container) bool {
	cmd := c.Get("command")
	return cmd != nil && cmd.Kind == yaml.SequenceNode && len(cmd.Content) > 0
}

// runAround makes a container's command and arguments the arguments of
// script, run by /bin/sh from the job's ConfigMap.
func runAround(c *pod.Container, script string) {
	args := ynode.Seq()
	for _, name := range []string{"command", "args"} {
		if n := c.Get(name); n != nil && n.Kind == yaml.SequenceNode {
			args.Content = append(args.Content, n.Content...)
		}
	}
	c.Set("command", ynode.Of([]string{"/bin/sh", mpi.ConfigDir + "/" + script}))
	c.Set("args", args)
}

// launchAround runs the launcher's command through mpi.Launch: the wait
// for the workers at every attempt, and the word to the workers when the
// job ends. It reports false, and leaves the container alone, when the
// container has no command of its own: the wait then runs as an init
// container, at each new pod only.
func (j *Job) launchAround(t *pod.Template, main *pod.Container) (bool, []result.Warning, *field.Error) {
	if !hasCommand(main) {
		return false, []result.Warning{{Field: main.Path().Child("command"),
			Message: "the launcher's container has no command, only its image's entrypoint, which trainfn cannot run its steps around: " +
				"the wait for the workers runs as an init container, before each new launcher pod only (with restartPolicy OnFailure, a retried mpirun does not wait), and the workers do not stop by themselves when the job ends; " +
				"name the command (mpirun ...) to have both"}}, nil
	}
	runAround(main, mpi.LaunchKey)
	// The wait records there that the workers were placed, for the
	// attempts after it in this pod.
	if err := mountRunDir(t, main); err != nil {
		return false, nil, err
	}
	limit := int32(mpi.DefaultBackoffLimit)
	if b := j.RunPolicy.BackoffLimit; b != nil {
		limit = *b
	}
	main.AddEnv(mpi.FailuresAllowedEnv, strconv.Itoa(int(mpi.FailuresAllowed(limit, t.String("restartPolicy")))))
	if !j.workersEnd() {
		main.AddEnv(mpi.WorkersEndEnv, "false")
	}
	return true, nil, nil
}

// workAround runs a worker's command through mpi.Work, so that it stops
// when the launcher says the job has ended and is made again when the
// kubelet stops it; the pipe it listens on is in its own scratch volume.
func workAround(t *pod.Template, main *pod.Container) *field.Error {
	runAround(main, mpi.WorkKey)
	return mountRunDir(t, main)
}

// mountRunDir gives a pod's main container its scratch directory.
func mountRunDir(t *pod.Template, main *pod.Container) *field.Error {
	if err := t.AddVolume(runDirVolume()); err != nil {
		return err
	}
	return main.AddVolumeMount(runVolume, mpi.RunDir)
}

// runDirVolume is the scratch directory's volume, in memory: it holds a
// pipe or a mark, nothing more.
func runDirVolume() *yaml.Node {
	return ynode.Map("name", runVolume, "emptyDir", ynode.Map("medium", "Memory", "sizeLimit", "1Mi"))
}

// endsAtFirstSuccess is the workers' Job's successPolicy when they stop
// by themselves: a worker succeeds only when the launcher tells it the job
// ended, and the Job controller then stops the rest.
func endsAtFirstSuccess() *yaml.Node {
	return ynode.Map("rules", ynode.Seq(ynode.Map("succeededCount", 1)))
}
