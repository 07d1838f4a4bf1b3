package progress

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDecodeValidReport(t *testing.T) {
	r, refused := decode(strings.NewReader(`{"trainerStatus": {"progressPercentage": 45, "estimatedRemainingSeconds": 795,
		"metrics": [{"name": "loss", "value": "0.23"}], "lastUpdatedTime": "2026-01-02T03:04:05.123456+00:00", "later": 1}}`))
	require.Nil(t, refused)
	require.NotNil(t, r.TrainerStatus)
	assert.Empty(t, validate(r.TrainerStatus))
	// Recorded in Trainer's shape, to the second, as the API server keeps a
	// metav1.Time.
	assert.Equal(t, `{"progressPercentage":45,"estimatedRemainingSeconds":795,"metrics":[{"name":"loss","value":"0.23"}],"lastUpdatedTime":"2026-01-02T03:04:05Z"}`,
		string(mustJSON(t, r.TrainerStatus)))
}

func TestDecodeNoReport(t *testing.T) {
	for _, body := range []string{`{}`, `{"trainerStatus": null}`} {
		r, refused := decode(strings.NewReader(body))
		require.Nil(t, refused, body)
		assert.Nil(t, r.TrainerStatus, body)
	}
}

func TestValidateRefusesWhatTrainerRefuses(t *testing.T) {
	long := strings.Repeat("é", 65)
	for _, c := range []struct {
		body  string
		field string
	}{
		{`{"trainerStatus": {"progressPercentage": 101, "lastUpdatedTime": "2026-01-02T03:04:05Z"}}`, "trainerStatus.progressPercentage"},
		{`{"trainerStatus": {"progressPercentage": -1, "lastUpdatedTime": "2026-01-02T03:04:05Z"}}`, "trainerStatus.progressPercentage"},
		{`{"trainerStatus": {"estimatedRemainingSeconds": -5, "lastUpdatedTime": "2026-01-02T03:04:05Z"}}`, "trainerStatus.estimatedRemainingSeconds"},
		{`{"trainerStatus": {"progressPercentage": 5}}`, "trainerStatus.lastUpdatedTime"},
		{`{"trainerStatus": {"metrics": [{"name": "", "value": "1"}], "lastUpdatedTime": "2026-01-02T03:04:05Z"}}`, "trainerStatus.metrics[0].name"},
		{`{"trainerStatus": {"metrics": [{"name": "a", "value": "` + long + `"}], "lastUpdatedTime": "2026-01-02T03:04:05Z"}}`, "trainerStatus.metrics[0].value"},
		{`{"trainerStatus": {"metrics": ` + manyMetrics(257) + `, "lastUpdatedTime": "2026-01-02T03:04:05Z"}}`, "trainerStatus.metrics"},
		{`{"trainerStatus": {"progressPercentage": "half"}}`, "trainerStatus.progressPercentage"},
		{`{"trainerStatus": {"lastUpdatedTime": "yesterday"}}`, "body"},
		{`not json`, "body"},
	} {
		r, refused := decode(strings.NewReader(c.body))
		if refused == nil {
			refused = invalid(validate(r.TrainerStatus))
		}
		require.NotNil(t, refused, c.body)
		s := refused.status
		assert.Equal(t, int32(http.StatusUnprocessableEntity), s.Code, c.body)
		assert.Equal(t, metav1.StatusReasonInvalid, s.Reason, c.body)
		require.NotNil(t, s.Details, c.body)
		require.NotEmpty(t, s.Details.Causes, c.body)
		assert.Equal(t, c.field, s.Details.Causes[0].Field, "%s: %s", c.body, s.Message)
	}
	// 256 metrics of 64 characters each are Trainer's most, and valid.
	r, refused := decode(strings.NewReader(`{"trainerStatus": {"metrics": ` + manyMetrics(256) + `, "lastUpdatedTime": "2026-01-02T03:04:05Z"}}`))
	require.Nil(t, refused)
	assert.Empty(t, validate(r.TrainerStatus))
}

func TestDecodeRefusesLargeBodies(t *testing.T) {
	body := `{"trainerStatus": {"lastUpdatedTime": "2026-01-02T03:04:05Z"}, "pad": "` + strings.Repeat("x", MaxBody) + `"}`
	_, refused := decode(strings.NewReader(body))
	require.NotNil(t, refused)
	assert.Equal(t, int32(http.StatusRequestEntityTooLarge), refused.status.Code)
}

func manyMetrics(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = `{"name": "m` + strings.Repeat("x", 60) + string(rune('a'+i%26)) + `", "value": "` + strings.Repeat("9", 64) + `"}`
	}
	return "[" + strings.Join(items, ",") + "]"
}

// A report dated further ahead than clocks drift is refused, naming the
// field; one within the bound is taken.
func TestCheckClockRefusesReportsFromTheFuture(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	assert.Empty(t, checkClock(report(1, now.Add(MaxClockSkew)), now))
	assert.Empty(t, checkClock(report(1, now.Add(-24*time.Hour)), now))
	errs := checkClock(report(1, now.Add(MaxClockSkew+time.Second)), now)
	require.Len(t, errs, 1)
	s := invalid(errs).status
	assert.Equal(t, int32(http.StatusUnprocessableEntity), s.Code)
	assert.Equal(t, "trainerStatus.lastUpdatedTime", s.Details.Causes[0].Field)
}
