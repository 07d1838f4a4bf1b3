package mpijob

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/trainfn/trainfn/render/mpi"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/shell"
)

// sshReach is how the launcher's mpirun reaches the workers' sshd, as far
// as the manifest tells: the ssh arguments its command line gives, and
// what the render must say of the rest.
type sshReach struct {
	// flagArgs are the ssh arguments of mpirun's command line when they
	// are literal; the launcher's wait takes them (mpi.WaitSSHArgsEnv).
	flagArgs string
	flagSet  bool
	warnings []result.Warning
}

// reachOverSSH reads the launcher's and the workers' command lines. Workers
// that listen on another port than the one mpirun is told, or arguments
// only a script knows, would render cleanly and leave the launcher waiting
// on port 22 until it gives up; the render says which variable to set.
func reachOverSSH(job *Job) sshReach {
	var r sshReach
	if job.launchMode() != options.SSH || job.Worker == nil {
		return r
	}
	launcher := job.main(pod.NewTemplate(job.Launcher.Template, job.Launcher.Path))
	variable := mpi.SSHArgsVar(job.Implementation)
	// known are the literal ssh arguments mpirun is given; unknown tells
	// that some come from where the render cannot look.
	var known []string
	unknown := launcher.Get("envFrom") != nil
	for _, c := range shell.Script(launcher.Node(), launcher.Path()) {
		for _, a := range c.Assigns {
			if slices.Contains(mpi.AllSSHArgsVars(), a.Name) {
				unknown = true
				r.warnings = append(r.warnings, result.Warning{Field: c.At, Message: fmt.Sprintf(
					"the launcher's script sets %s, which the launcher's wait for the workers (an init container, which does not run the script) cannot see: "+
						"set it in the container's env instead", a.Name)})
			}
		}
		if !strings.Contains(c.Name(), "mpirun") && !strings.Contains(c.Name(), "mpiexec") {
			continue
		}
		words := make([]string, len(c.Args))
		for i, w := range c.Args {
			words[i] = w.Text
		}
		at := mpi.SSHArgsFlag(words)
		if at < 0 {
			continue
		}
		if !c.Args[at].Literal {
			unknown = true
			r.warnings = append(r.warnings, result.Warning{Field: c.At, Message: fmt.Sprintf(
				"mpirun's ssh arguments (%s %s %q) are only known when the script runs, so the launcher's wait for the workers cannot use them: "+
					"set %s in the launcher container's env instead", words[at-2], words[at-1], words[at], variable)})
			continue
		}
		r.flagArgs, r.flagSet = words[at], true
		known = append(known, words[at])
	}
	for _, v := range mpi.SSHArgsVars(job.Implementation) {
		if value, from := launcher.Env(v); from {
			unknown = true
		} else if value != "" {
			known = append(known, value)
		}
	}
	worker := job.main(pod.NewTemplate(job.Worker.Template, job.Worker.Path))
	port, at := sshdPort(shell.Script(worker.Node(), worker.Path()))
	if port == "" || unknown {
		return r
	}
	for _, args := range known {
		if sshPortArg.MatchString(args) {
			return r
		}
	}
	r.warnings = append(r.warnings, result.Warning{Field: at, Message: fmt.Sprintf(
		"the workers' sshd listens on port %s, but nothing tells the launcher's mpirun, which connects to port 22 or the port of its image's ssh_config: "+
			"unless that says Port %s, set %s=\"-p %s\" in the launcher container's env (Open MPI 5 also reads PRTE_MCA_plm_ssh_args)",
		port, port, variable, port)})
	return r
}

// sshPortArg is an ssh argument that names a port: -p N, -pN, -o Port=N.
var sshPortArg = regexp.MustCompile(`(^|\s)(-p\s*[0-9]|-o\s*Port[=\s])`)

// sshdPort is the port a worker's sshd is told on its command line (-p N,
// -pN, -o Port=N), and where; none when it reads its port from its config.
func sshdPort(commands []shell.Command) (string, *field.Path) {
	for _, c := range commands {
		if c.Name() != "sshd" {
			continue
		}
		for i := 1; i < len(c.Args); i++ {
			w := c.Args[i].Text
			var next string
			if i+1 < len(c.Args) {
				next = c.Args[i+1].Text
			}
			switch {
			case w == "-p":
				return next, c.At
			case strings.HasPrefix(w, "-p"):
				return w[2:], c.At
			case w == "-o" && strings.HasPrefix(next, "Port="):
				return strings.TrimPrefix(next, "Port="), c.At
			}
		}
	}
	return "", nil
}
