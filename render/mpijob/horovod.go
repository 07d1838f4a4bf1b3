package mpijob

import (
	"regexp"
	"strings"

	"github.com/trainfn/trainfn/render"
	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
)

// elasticHorovodFlag is a flag of horovodrun's elastic mode: a discovery
// script, or bounds on the processes (--min-np alone makes a run elastic;
// --max-np is ignored without it, which its writer hardly means).
var elasticHorovodFlag = regexp.MustCompile(`(^|\s)(--host-discovery-script|--min-np|--max-np|--min-num-proc|--max-num-proc)(=|\s|$)`)

// horovodWarning tells of a launcher that runs horovodrun in its elastic
// mode while the job's worker count is fixed: without the elastic-workers
// annotation, the workers never change, and the discovery script always
// lists all of them, so the run is elastic in name only.
func horovodWarning(job *Job) []render.Warning {
	if job.elastic() != nil {
		return nil
	}
	main := job.main(pod.NewTemplate(job.Launcher.Template, job.Launcher.Path))
	var words []string
	for _, name := range []string{"command", "args"} {
		if n := main.Get(name); n != nil {
			for _, w := range n.Content {
				words = append(words, w.Value)
			}
		}
	}
	line := strings.Join(words, " ")
	m := elasticHorovodFlag.FindStringSubmatch(line)
	if !strings.Contains(line, "horovodrun") || m == nil {
		return nil
	}
	return []render.Warning{{Field: main.Path().Child("command"),
		Message: "horovodrun runs elastic (" + m[2] + "), but the job's worker count is fixed and its discover_hosts.sh always lists every worker: " +
			"to let workers join and leave, add the annotation " + options.ElasticWorkersAnnotation + `: "MIN:MAX" (workers, where --min-np and --max-np count processes)`}}
}
