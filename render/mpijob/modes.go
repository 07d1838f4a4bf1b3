package mpijob

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
)

// mode is what a launch mode renders alike for every MPIJob: how mpirun
// reaches the workers, the script that checks they can be reached the same
// way, the files of the job's ConfigMap it needs, and what the workers run
// for it. The launcher's own set-up (a key, kubectl and its Role) and the
// objects beside the workloads are the launch mode's own, in the launcher
// and the render.
type mode struct {
	// agent is mpirun's remote shell; empty for ssh, its default.
	agent string
	// wait is wait_for_workers.sh for the job's MPI implementation.
	wait func(mpi.Implementation) string
	// files are what the ConfigMap holds for the mode beside the wait.
	files func(*Job) map[string]string
	// serve and serveArgs are the workers' command when their template
	// gives none, and mount what it needs mounted.
	serve, serveArgs []string
	mount            func(*Job, *pod.Template, *pod.Container) *field.Error
	// serves says what the workers run, in words.
	serves string
}

func modeOf(m options.LaunchMode) mode {
	switch m {
	case options.KubectlExec:
		return mode{
			agent: mpi.ConfigDir + "/" + mpi.KubexecKey,
			wait:  func(mpi.Implementation) string { return mpi.WaitForExec },
			files: func(job *Job) map[string]string {
				return map[string]string{mpi.KubexecKey: mpi.Kubexec(workerContainer(job))}
			},
			serve: []string{"sleep"}, serveArgs: []string{"365d"}, mount: mountKubexec,
			serves: "sleep 365d, while the launcher's mpirun starts processes in them through kubectl exec",
		}
	case options.Rsh:
		return mode{
			agent: mpi.RshAgent,
			wait:  func(mpi.Implementation) string { return mpi.WaitForRsh },
			files: func(*Job) map[string]string {
				return map[string]string{mpi.ServeRshKey: mpi.ServeRsh, mpi.RshdConfKey: mpi.RshdConf}
			},
			serve: []string{"/bin/sh", mpi.ConfigDir + "/" + mpi.ServeRshKey}, mount: mountRsh,
			serves: "an rsh server (" + mpi.ConfigDir + "/" + mpi.ServeRshKey + "), which the launcher's mpirun reaches them with",
		}
	default:
		return mode{
			wait:  mpi.WaitForWorkers,
			files: func(*Job) map[string]string { return nil },
			serve: []string{"/usr/sbin/sshd", "-De"}, mount: mountSSH,
			serves: "sshd (/usr/sbin/sshd -De), which the launcher's mpirun logs in to",
		}
	}
}
