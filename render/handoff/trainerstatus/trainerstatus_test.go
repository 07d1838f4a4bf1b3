package trainerstatus

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Parse reads what Validate accepts, and nothing else: the server's
// rules for a report are the reader's for its record.
func TestParseKeepsToValidate(t *testing.T) {
	for record, ok := range map[string]bool{
		`{"progressPercentage":45,"metrics":[{"name":"loss","value":"0.23"}],"lastUpdatedTime":"2026-01-02T03:04:05Z","later":1}`: true,
		`{"lastUpdatedTime":"2026-01-02T03:04:05Z"}`:                                                                                   true,
		`{"progressPercentage":45}`:                                                                                                    false,
		`{"progressPercentage":101,"lastUpdatedTime":"2026-01-02T03:04:05Z"}`:                                                          false,
		`{"estimatedRemainingSeconds":-1,"lastUpdatedTime":"2026-01-02T03:04:05Z"}`:                                                    false,
		`{"metrics":[{"name":"","value":"1"}],"lastUpdatedTime":"2026-01-02T03:04:05Z"}`:                                               false,
		`{"metrics":[{"name":"a","value":"` + strings.Repeat("é", MaxMetricLength+1) + `"}],"lastUpdatedTime":"2026-01-02T03:04:05Z"}`: false,
		`not json`: false,
	} {
		s, got := Parse(record)
		assert.Equal(t, ok, got, record)
		if ok {
			assert.Empty(t, s.Validate(field.NewPath("trainerStatus")), record)
		}
	}
}
