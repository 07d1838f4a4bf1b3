package mpijob

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/trainfn/trainfn/render/options"
	"github.com/trainfn/trainfn/render/pod"
	"github.com/trainfn/trainfn/render/result"
)

// elasticHorovodFlags are horovodrun's flags that make its run elastic: a
// discovery script, or a least number of processes (--max-np alone is
// ignored in a run that is not elastic).
var elasticHorovodFlags = []string{"--host-discovery-script", "--min-np", "--min-num-proc"}

// shellSeparators end a command in a shell line.
var shellSeparators = []string{"&&", "||", ";", "|", "&"}

// word is a word of a container's command line and the field it is in.
type word struct {
	text string
	at   *field.Path
}

// horovodWarning tells of a launcher that runs horovodrun in its elastic
// mode while the job's worker count is fixed: without the elastic-workers
// annotation, the workers never change, and the discovery script always
// lists all of them, so the run is elastic in name only.
func horovodWarning(job *Job) []result.Warning {
	if job.elastic() != nil {
		return nil
	}
	main := job.main(pod.NewTemplate(job.Launcher.Template, job.Launcher.Path))
	// A shell line (sh -c "...") is one item of many words.
	var words []word
	for _, name := range []string{"command", "args"} {
		if n := main.Get(name); n != nil {
			for i, item := range n.Content {
				for _, w := range strings.Fields(item.Value) {
					words = append(words, word{w, main.Path().Child(name).Index(i)})
				}
			}
		}
	}
	running := false
	for _, w := range words {
		switch {
		case strings.HasSuffix(w.text, "horovodrun"):
			running = true
		case slices.Contains(shellSeparators, w.text):
			running = false
		case running && isElasticFlag(w.text):
			flag, _, _ := strings.Cut(w.text, "=")
			return []result.Warning{{Field: w.at,
				Message: "horovodrun runs elastic (" + flag + "), but the job's worker count is fixed and its discover_hosts.sh always lists every worker: " +
					"to let workers join and leave, add the annotation " + options.ElasticWorkersAnnotation + `: "MIN:MAX" (workers, where --min-np and --max-np count processes)`}}
		}
	}
	return nil
}

// isElasticFlag tells whether a word is one of elasticHorovodFlags, alone
// or with its value (--min-np=2).
func isElasticFlag(w string) bool {
	flag, _, _ := strings.Cut(w, "=")
	return slices.Contains(elasticHorovodFlags, flag)
}
