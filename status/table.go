package status

import (
	"cmp"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// none is what kubectl writes in a cell that has nothing to say.
const none = "<none>"

// columns are the table's, as kubectl's printers define theirs: those of
// priority 0 always, those of priority 1 with -o wide only.
var columns = []metav1.TableColumnDefinition{
	{Name: "Name", Type: "string", Format: "name", Description: "The job's name, its workloads' job-name label."},
	{Name: "Kind", Type: "string", Description: "The kind of job spec it was rendered from."},
	{Name: "Phase", Type: "string", Description: "Where the job is in its life, derived from its live objects."},
	{Name: "Ready", Type: "string", Description: "Its pods running and ready, over those it should have now."},
	{Name: "Restarts", Type: "integer", Description: "Container restarts of its live pods, and pods its Jobs replaced."},
	{Name: "Age", Type: "string", Description: "How long ago its first workload was created."},
	{Name: "Progress", Type: "string", Priority: 1, Description: "The progress its trainer last reported."},
	{Name: "ETA", Type: "string", Priority: 1, Description: "The time its trainer last expected to take still, while it has not ended."},
	{Name: "Reason", Type: "string", Priority: 1, Description: "Why it last failed: its Failed condition's reason, else its pods' last failure."},
	{Name: "Message", Type: "string", Priority: 1, Description: "What its phase waits for, or why it ended."},
}

// TableOf is the jobs as kubectl's table, one row per job in the order
// given, with ages measured to now. Each row's object is the job's JSON
// document; it also carries the job's metadata, which the printer reads
// for its NAMESPACE and LABELS columns, as a table from the API server
// carries them.
func TableOf(jobs []Job, now time.Time) *metav1.Table {
	t := &metav1.Table{
		TypeMeta:          metav1.TypeMeta{APIVersion: metav1.SchemeGroupVersion.String(), Kind: "Table"},
		ColumnDefinitions: columns,
		Rows:              make([]metav1.TableRow, 0, len(jobs)),
	}
	for _, j := range jobs {
		// A Job is strings, numbers, times and maps keyed by strings,
		// which always marshal.
		doc, _ := json.Marshal(j)
		t.Rows = append(t.Rows, metav1.TableRow{
			Cells: []any{
				j.Name, j.Kind, string(j.Phase), fmt.Sprintf("%d/%d", j.Ready, j.Expected), int64(j.Restarts), age(j, now),
				progress(j), eta(j), cmp.Or(j.lastFailure, none), cmp.Or(j.Message, none),
			},
			Object: runtime.RawExtension{Raw: doc, Object: &metav1.PartialObjectMetadata{
				TypeMeta:   metav1.TypeMeta{APIVersion: metav1.SchemeGroupVersion.String(), Kind: "PartialObjectMetadata"},
				ObjectMeta: metav1.ObjectMeta{Namespace: j.Namespace, Name: j.Name, CreationTimestamp: j.Created},
			}},
		})
	}
	return t
}

// age is how long ago the job was created, as kubectl writes it.
func age(j Job, now time.Time) string {
	if j.Created.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(j.Created.Time))
}

// progress is the percentage the trainer last reported.
func progress(j Job) string {
	if j.TrainerStatus == nil || j.TrainerStatus.ProgressPercentage == nil {
		return none
	}
	return fmt.Sprintf("%d%%", *j.TrainerStatus.ProgressPercentage)
}

// eta is the time the trainer last expected to take still, while the job
// has not ended: once it has, nothing remains, whatever the last report
// said.
func eta(j Job) string {
	if j.TrainerStatus == nil || j.TrainerStatus.EstimatedRemainingSeconds == nil || j.Phase.Ended() {
		return none
	}
	return duration.HumanDuration(time.Duration(*j.TrainerStatus.EstimatedRemainingSeconds) * time.Second)
}
