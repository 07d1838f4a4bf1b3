package status

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TableOf: placeholder until the table with wide columns lands.
func TableOf(jobs []Job, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string"}, {Name: "Kind", Type: "string"}, {Name: "Phase", Type: "string"},
		{Name: "Ready", Type: "string"}, {Name: "Restarts", Type: "integer"}, {Name: "Age", Type: "string"},
		{Name: "Reason", Type: "string", Priority: 1},
	}}
	for _, j := range jobs {
		t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{j.Name, j.Kind, string(j.Phase), fmt.Sprintf("%d/%d", j.Ready, j.Expected), int64(j.Restarts), age(j, now), j.Reason}})
	}
	return t
}
