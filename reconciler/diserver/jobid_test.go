package diserver

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseJobID(t *testing.T) {
	for in, want := range map[string]JobID{
		"default.job.1":            {Namespace: "default", Name: "job", Generation: 1},
		"team-a.cartpole.12":       {Namespace: "team-a", Name: "cartpole", Generation: 12},
		"ns.dotted.name.v2.3":      {Namespace: "ns", Name: "dotted.name.v2", Generation: 3},
		"ns.a.9223372036854775807": {Namespace: "ns", Name: "a", Generation: 9223372036854775807},
	} {
		t.Run(in, func(t *testing.T) {
			got, err := ParseJobID(in)
			require.NoError(t, err)
			require.Equal(t, want, got)
			require.Equal(t, in, got.String(), "a job_id reads back as it was written")
		})
	}
}

func TestParseJobIDRefuses(t *testing.T) {
	for in, mentions := range map[string]string{
		"":                                 "not namespace.name.generation",
		"default":                          "not namespace.name.generation",
		"default.job":                      "not namespace.name.generation",
		".job.1":                           "namespace",
		"Default.job.1":                    "namespace",
		"default..1":                       "name",
		"default.Job.1":                    "name",
		"default.job_x.1":                  "name",
		"default.job.":                     "generation",
		"default.job.0":                    "generation",
		"default.job.-1":                   "generation",
		"default.job.+1":                   "generation",
		"default.job.01":                   "generation",
		"default.job.one":                  "generation",
		"default.job.99999999999999999999": "generation",
		// A valid object name, but too long for the job-name label.
		"default." + strings.Repeat("a", 64) + ".1": "name",
	} {
		t.Run(in, func(t *testing.T) {
			_, err := ParseJobID(in)
			require.Error(t, err)
			require.Contains(t, err.Error(), "job_id: ")
			require.Contains(t, err.Error(), mentions)
		})
	}
}
