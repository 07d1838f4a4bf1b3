package mpijob

import (
	"slices"
	"strconv"
	"strings"

	"github.com/trainfn/trainfn/render/handoff"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/result"
	"github.com/trainfn/trainfn/render/shell"
)

// elasticHorovodFlags are horovodrun's flags that make its run elastic: a
// discovery script, or a least number of processes (--max-np alone is
// ignored in a run that is not elastic).
var elasticHorovodFlags = []string{"--host-discovery-script", "--min-np", "--min-num-proc"}

// slotsFlags give horovodrun the slots of a discovered host that prints
// none (--slots is the short name of --slots-per-host).
var slotsFlags = []string{"--slots-per-host", "--slots"}

// horovodWarning tells of a launcher whose horovodrun will not run as its
// author meant:
//   - in its elastic mode while the job's worker count is fixed: without
//     the elastic-workers annotation the workers never change, and the
//     discovery script always lists all of them, so the run is elastic in
//     name only;
//   - with a discovery script that prints hosts without slots (mpi-operator
//     v2's format) and no --slots-per-host, which Horovod's reader needs
//     for such a line.
func horovodWarning(job *Job) []result.Warning {
	main := job.main(pod.NewTemplate(job.Launcher.Template, job.Launcher.Path))
	var warnings []result.Warning
	for _, c := range shell.Script(main.Node(), main.Path()) {
		if c.Name() != "horovodrun" {
			continue
		}
		var discovers, slots bool
		for _, w := range c.Args[1:] {
			flag, _, _ := strings.Cut(w.Text, "=")
			discovers = discovers || flag == "--host-discovery-script"
			slots = slots || slices.Contains(slotsFlags, flag)
			if job.elastic() == nil && slices.Contains(elasticHorovodFlags, flag) && len(warnings) == 0 {
				warnings = append(warnings, result.Warning{Field: w.At,
					Message: "horovodrun runs elastic (" + flag + "), but the job's worker count is fixed and its discover_hosts.sh always lists every worker: " +
						"to let workers join and leave, add the annotation " + options.ElasticWorkersAnnotation + `: "MIN:MAX" (workers, where --min-np and --max-np count processes)`})
			}
		}
		if discovers && !slots && job.discoverFormat() == handoff.HostOnly {
			n := strconv.Itoa(int(job.SlotsPerWorker))
			if job.SlotsPerWorker == 0 {
				n = "N, the processes each worker runs,"
			}
			warnings = append(warnings, result.Warning{Field: c.At,
				Message: "discover_hosts.sh prints one host per line without its slots, as mpi-operator v2's does, and horovodrun then needs them from --slots-per-host: " +
					"add --slots-per-host " + n + " to horovodrun (training-operator's kubeflow.org/v1 MPIJob printed host:slots)"})
		}
	}
	return warnings
}
