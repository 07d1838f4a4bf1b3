package mpijob

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/ynode"
)

// configItem is a key of the job's ConfigMap as a file of the given mode.
func configItem(key string, mode int32) *yaml.Node {
	return ynode.Map("key", key, "path", key, "mode", ynode.FileMode(mode))
}

// mode is what a launch mode renders alike for every MPIJob: how mpirun
// reaches the workers, the script that checks they can be reached the same
// way, the files of the job's ConfigMap it needs, and what the workers run
// for it. The launcher's own set-up (a key, kubectl and its Role) and the
// objects beside the workloads are the launch mode's own, in the launcher
// and the render.
type mode struct {
	// agent is mpirun's remote shell; empty for ssh, its default.
	agent string
	// wait is wait_for_workers.sh for the job's MPI implementation, and
	// launch the launcher's command around mpirun's.
	wait, launch func(mpi.Implementation) string
	// files are what the ConfigMap holds for the mode beside the wait.
	files func(*Job) map[string]string
	// serve and serveArgs are the workers' command when their template
	// gives none, mount what else it needs mounted, and workerFiles the
	// keys of the ConfigMap the workers find at mpi.ConfigDir.
	serve, serveArgs []string
	mount            func(*Job, *pod.Template, *pod.Container) *field.Error
	workerFiles      []*yaml.Node
	// serves says what the workers run, in words.
	serves string
}

func modeOf(m options.LaunchMode) mode {
	switch m {
	case options.KubectlExec:
		return mode{
			agent:  mpi.ConfigDir + "/" + mpi.KubexecKey,
			wait:   func(mpi.Implementation) string { return mpi.WaitForExec },
			launch: func(mpi.Implementation) string { return mpi.LaunchOverKubectlExec },
			files: func(job *Job) map[string]string {
				indexed := handoff.WorkersName(job.Name)
				if job.workersInStatefulSet() {
					indexed = "" // a StatefulSet, which names its pods as their hosts
				}
				return map[string]string{mpi.KubexecKey: mpi.Kubexec(workerContainer(job), indexed)}
			},
			serve: []string{"sleep"}, serveArgs: []string{"365d"},
			// Open MPI hands mpirun's plm_rsh_agent to every orted on its
			// command line, and Open MPI 4's orted, finding no such file,
			// stops (and crashes) before it starts a rank. Found on a real
			// node; the launcher alone had it.
			workerFiles: []*yaml.Node{configItem(mpi.KubexecKey, 0o555)},
			serves:      "sleep 365d, while the launcher's mpirun starts processes in them through kubectl exec",
		}
	case options.Rsh:
		return mode{
			agent:  mpi.RshAgent,
			wait:   func(mpi.Implementation) string { return mpi.WaitForRsh },
			launch: func(mpi.Implementation) string { return mpi.LaunchOverRsh },
			files: func(*Job) map[string]string {
				return map[string]string{mpi.ServeRshKey: mpi.ServeRsh, mpi.RshdConfKey: mpi.RshdConf}
			},
			serve:       []string{"/bin/sh", mpi.ConfigDir + "/" + mpi.ServeRshKey},
			workerFiles: []*yaml.Node{configItem(mpi.ServeRshKey, 0o555), configItem(mpi.RshdConfKey, 0o444)},
			serves:      "an rsh server (" + mpi.ConfigDir + "/" + mpi.ServeRshKey + "), which the launcher's mpirun reaches them with",
		}
	default:
		return mode{
			wait:   mpi.WaitForWorkers,
			launch: mpi.LaunchOverSSH,
			files: func(j *Job) map[string]string {
				if !j.launcherMultiplexes() {
					return nil
				}
				return map[string]string{mpi.SSHConfigKey: mpi.SSHConfig}
			},
			serve: []string{"/usr/sbin/sshd", "-De"}, mount: mountSSH,
			serves: "sshd (/usr/sbin/sshd -De), which the launcher's mpirun logs in to",
		}
	}
}
